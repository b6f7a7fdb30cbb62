/**
 * The Service's Entities::Milestone (15.2): `project_id` for a project's milestone and `group_id`
 * for a group's (the other left out), `expired` when its due date has passed (Milestoneish#expired?:
 * a milestone due today is not yet expired) and `web_url` under its project or group.
 */
import { Type, type Static } from 'typebox';
import type { MilestoneRow } from '../../db/tables/labels.ts';
import { todayDate } from '../../domain/clock.ts';
import { flat } from './serializers.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const MilestoneSchema = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  project_id: Type.Optional(Type.Integer()),
  group_id: Type.Optional(Type.Integer()),
  title: Type.String(),
  description: NString,
  state: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  due_date: NString,
  start_date: NString,
  expired: Type.Boolean(),
  web_url: Type.String(),
}, { title: 'Milestone' });

export type Milestone = Static<typeof MilestoneSchema>;

/**
 * `ownerWebUrl` is the web_url of the milestone's owner: the project's (`<url>/<full path>`) for a
 * project milestone, the group's (`<url>/groups/<full path>`) for a group milestone.
 */
export function presentMilestone(row: MilestoneRow, ownerWebUrl: string): Milestone {
  const e = { id: row.id, iid: row.iid } as Milestone;
  if (row.project_id !== null) e.project_id = row.project_id;
  if (row.group_id !== null) e.group_id = row.group_id;
  e.title = row.title;
  e.description = row.description;
  e.state = row.state;
  e.created_at = row.created_at;
  e.updated_at = row.updated_at;
  e.due_date = row.due_date;
  e.start_date = row.start_date;
  e.expired = row.due_date !== null && row.due_date < todayDate();
  e.web_url = flat(ownerWebUrl, '/-/milestones/', row.iid);
  return e;
}
