/**
 * The entities of issue links (lib/api/entities/issue_link.rb, related_issue.rb of the Service
 * 15.2): IssueLink names both ends as IssueBasic with the stored type; RelatedIssue is a linked
 * issue as the Issue entity with its link's id, type (from the listing issue's side) and times.
 */
import { Type, type Static } from 'typebox';
import { IssueBasicSchema, IssueSchema, type Issue, type IssueBasic } from './issue.ts';

export const IssueLinkSchema = Type.Object({
  source_issue: IssueBasicSchema,
  target_issue: IssueBasicSchema,
  link_type: Type.String(),
}, { title: 'IssueLink' });

export const RelatedIssueSchema = Type.Object({
  ...IssueSchema.properties,
  issue_link_id: Type.Integer(),
  link_type: Type.String(),
  link_created_at: Type.String(),
  link_updated_at: Type.String(),
}, { title: 'RelatedIssue' });

export type IssueLinkEntity = Static<typeof IssueLinkSchema>;

const BASIC_KEYS = Object.keys(IssueBasicSchema.properties) as (keyof IssueBasic)[];

/** IssueBasic of an Issue entity: the Issue entity extends it, so its fields are a subset. */
export function toIssueBasic(issue: Issue): IssueBasic {
  const out: Record<string, unknown> = {};
  for (const key of BASIC_KEYS) out[key] = issue[key];
  return out as IssueBasic;
}
