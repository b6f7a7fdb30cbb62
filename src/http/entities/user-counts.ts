/** User counts (spec: User counts), in the Service's field order (lib/api/user_counts.rb). */
import { Type, type Static } from 'typebox';

export const UserCountsSchema = Type.Object({
  merge_requests: Type.Integer({ description: 'deprecated in 13.8; equals assigned_merge_requests' }),
  assigned_issues: Type.Integer(),
  assigned_merge_requests: Type.Integer(),
  review_requested_merge_requests: Type.Integer(),
  todos: Type.Integer(),
}, { title: 'UserCounts' });

export type UserCounts = Static<typeof UserCountsSchema>;
