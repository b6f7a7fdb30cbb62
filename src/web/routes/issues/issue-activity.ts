/**
 * The label, milestone and state changes of an issue as its page shows them among the notes. In
 * the Service 15.2 these changes are resource events, not system notes (update-issue.ts), and its
 * issue page merges them into the discussion as notes of their own
 * (ResourceEvents::MergeIntoNotesService): "added ~a ~b labels and removed ~c label" for one
 * person's label changes at one moment, "changed milestone to %m" / "removed milestone %m",
 * "closed" / "reopened". The rows are the ones GET …/resource_*_events reads.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.ts';
import {
  labelEventsOfIssue, labelsByIds, milestoneEventsOfIssue, stateEventsOfIssue,
} from '../../../domain/issues/resource-events.queries.ts';
import { milestonesByIds } from '../../../domain/issues/issues.queries.ts';
import { milestoneOwnerUrl, milestonePathsOf, type IssueProjectPath } from '../../../http/entities/issue.ts';
import { html, type SafeHtml } from '../../html.ts';
import { issuesPath, labelChip, localPath } from '../../issue-view.ts';

/** Events of each kind read for one page (an issue with more shows its first ones). */
const MAX_EVENTS = 500;

export interface ActivityEvent {
  /** When it happened (ISO time), to place it among the notes. */
  at: string;
  userId: number | null;
  /** A stable anchor for the entry. */
  anchor: string;
  text: SafeHtml;
}

const plural = (n: number, word: string) => (n === 1 ? word : `${word}s`);

export async function issueActivity(
  db: Kysely<DB>, externalUrl: string, issueId: number, projectId: number, project: IssueProjectPath,
): Promise<ActivityEvent[]> {
  const [labelEvents, milestoneEvents, stateEvents] = await Promise.all([
    labelEventsOfIssue(db, issueId).limit(MAX_EVENTS).execute(),
    milestoneEventsOfIssue(db, issueId).limit(MAX_EVENTS).execute(),
    stateEventsOfIssue(db, issueId).limit(MAX_EVENTS).execute(),
  ]);
  const [labels, milestones] = await Promise.all([
    labelsByIds(db, labelEvents.flatMap((e) => (e.label_id === null ? [] : [e.label_id]))),
    milestonesByIds(db, milestoneEvents.flatMap((e) => (e.milestone_id === null ? [] : [e.milestone_id]))),
  ]);
  const paths = await milestonePathsOf(db, [...milestones.values()], new Map([[projectId, project]]));
  const list = issuesPath(project.fullPath);
  const out: ActivityEvent[] = [];

  // One person's label changes at one moment are one entry, its labels by name (LabelNote groups
  // them so); labels deleted since are counted: "added ~a + 1 deleted label", "added 2 deleted labels".
  type Change = { title: string; chip: SafeHtml } | null;
  const groups = new Map<string, { at: string; userId: number | null; id: number; added: Change[]; removed: Change[] }>();
  for (const e of labelEvents) {
    const label = e.label_id === null ? undefined : labels.get(e.label_id);
    const change: Change = label ? {
      title: label.title,
      chip: labelChip({ name: label.title, color: label.color, description: label.description },
        `${list}?${new URLSearchParams({ 'label_name[]': label.title })}`),
    } : null;
    const key = `${e.user_id ?? ''}@${e.created_at}`;
    const g = groups.get(key) ?? { at: e.created_at, userId: e.user_id, id: e.id, added: [], removed: [] };
    (e.action === 'remove' ? g.removed : g.added).push(change);
    groups.set(key, g);
  }
  const labelsText = (verb: string, changes: Change[]) => {
    if (changes.length === 0) return null;
    const existing = changes.filter((c): c is NonNullable<Change> => c !== null)
      .sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0));
    const deleted = changes.length - existing.length;
    const chips = existing.length > 0 ? html`${existing.map((c, i) => html`${i > 0 ? ' ' : ''}${c.chip}`)}` : null;
    const count = deleted > 0 ? `${deleted} deleted` : null;
    return html`${verb} ${chips ?? ''}${chips && count ? ' + ' : ''}${count ?? ''} ${plural(deleted > 0 ? deleted : existing.length, 'label')}`;
  };
  for (const g of groups.values()) {
    const parts = [labelsText('added', g.added), labelsText('removed', g.removed)].filter((p): p is SafeHtml => p !== null);
    out.push({ at: g.at, userId: g.userId, anchor: `label-event-${g.id}`, text: html`${parts.map((p, i) => html`${i > 0 ? ' and ' : ''}${p}`)}` });
  }

  for (const e of milestoneEvents) {
    const m = e.milestone_id === null ? undefined : milestones.get(e.milestone_id);
    const link = m
      ? html`<a href="${localPath(`${milestoneOwnerUrl(m, externalUrl, paths)}/-/milestones/${m.iid}`)}">${m.title}</a>`
      : html`a deleted milestone`;
    out.push({
      at: e.created_at, userId: e.user_id, anchor: `milestone-event-${e.id}`,
      text: e.action === 'remove' ? html`removed milestone ${link}` : html`changed milestone to ${link}`,
    });
  }

  for (const e of stateEvents) {
    const what = e.state === 'closed' && e.source_merge_request_id !== null ? 'closed via a merge request'
      : e.state === 'closed' && e.source_commit ? 'closed via a commit' : e.state;
    out.push({ at: e.created_at, userId: e.user_id, anchor: `state-event-${e.id}`, text: html`${what}` });
  }
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}
