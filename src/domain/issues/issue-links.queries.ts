/**
 * Links between issues (IssueLink of the Service 15.2): `relates_to` or `blocks`, one row per
 * pair and direction (the unique index on source and target). `is_blocked_by` is stored as the
 * reverse `blocks` link (IssueLinks::CreateService#set_link_type), so a list read from the other
 * end names it `is_blocked_by` again. Creating and removing a link write a system note on both
 * issues in the same transaction (SystemNoteService.relate_issuable / unrelate_issuable).
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { IssueRow } from '../../db/tables/issues.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import { addSystemNote } from '../notes/system-notes.ts';

type Db = Kysely<DB> | Transaction<DB>;

export const LINK_TYPES = ['relates_to', 'blocks', 'is_blocked_by'] as const;
export type LinkType = (typeof LINK_TYPES)[number];

export interface IssueLinkRow {
  id: number;
  source_id: number;
  target_id: number;
  link_type: string;
  created_at: string;
  updated_at: string;
}

/** An issue linked to another, as seen from that other one. */
export interface RelatedIssue {
  issue: IssueRow;
  linkId: number;
  /** From the viewing issue's side: a `blocks` link stored the other way round reads `is_blocked_by`. */
  linkType: LinkType;
  linkCreatedAt: string;
  linkUpdatedAt: string;
}

/** The issues linked to `issueId` in either direction, oldest link first (Issue#related_issues orders by link id). */
export async function relatedIssues(db: Db, issueId: number): Promise<RelatedIssue[]> {
  const [outgoing, incoming] = await Promise.all([
    db.selectFrom('issue_links').innerJoin('issues', 'issues.id', 'issue_links.target_id').selectAll('issues')
      .select(['issue_links.id as link_id', 'issue_links.link_type', 'issue_links.created_at as link_created_at',
        'issue_links.updated_at as link_updated_at'])
      .where('issue_links.source_id', '=', issueId).execute(),
    db.selectFrom('issue_links').innerJoin('issues', 'issues.id', 'issue_links.source_id').selectAll('issues')
      .select(['issue_links.id as link_id', 'issue_links.link_type', 'issue_links.created_at as link_created_at',
        'issue_links.updated_at as link_updated_at'])
      .where('issue_links.target_id', '=', issueId).execute(),
  ]);
  const out: RelatedIssue[] = [];
  for (const [rows, reversed] of [[outgoing, false], [incoming, true]] as const) {
    for (const { link_id, link_type, link_created_at, link_updated_at, ...issue } of rows) {
      const type = (reversed && link_type === 'blocks' ? 'is_blocked_by' : link_type) as LinkType;
      out.push({ issue, linkId: link_id, linkType: type, linkCreatedAt: link_created_at, linkUpdatedAt: link_updated_at });
    }
  }
  return out.sort((a, b) => a.linkId - b.linkId);
}

/** A link that has `issueId` at either end (IssueLink.for_source_or_target). */
export function findLinkOfIssue(db: Db, issueId: number, linkId: number): Promise<IssueLinkRow | undefined> {
  return db.selectFrom('issue_links').selectAll().where('id', '=', linkId)
    .where((eb) => eb.or([eb('source_id', '=', issueId), eb('target_id', '=', issueId)])).executeTakeFirst();
}

export interface NewIssueLink {
  source: IssueRow;
  target: IssueRow;
  linkType: LinkType;
  userId: number;
  /** The note on the source naming the target, and the note on the target naming the source. */
  sourceNote: string;
  targetNote: string;
}

export type CreateLinkResult = { ok: true; value: IssueLinkRow } | { ok: false; reason: 'already_linked' };

/**
 * Links two issues. Either direction already linked is a conflict (IssueLinks::CreateService
 * compares with every related issue); the same direction is also the unique index's refusal
 * when two requests race.
 */
export async function createIssueLink(db: Kysely<DB>, l: NewIssueLink): Promise<CreateLinkResult> {
  const [source, target, type] = l.linkType === 'is_blocked_by'
    ? [l.target, l.source, 'blocks'] : [l.source, l.target, l.linkType];
  try {
    return await db.transaction().execute(async (trx) => {
      // A link either way round already there breaks the unordered pair's unique index (migration 2026-11-27T1200).
      const now = nowIso();
      const row = await trx.insertInto('issue_links')
        .values({ source_id: source.id, target_id: target.id, link_type: type, created_at: now, updated_at: now })
        .returningAll().executeTakeFirstOrThrow();
      await addSystemNote(trx, {
        project_id: l.source.project_id, noteable_type: 'Issue', noteable_id: l.source.id, author_id: l.userId,
        note: l.sourceNote, action: 'relate',
      }, now);
      await addSystemNote(trx, {
        project_id: l.target.project_id, noteable_type: 'Issue', noteable_id: l.target.id, author_id: l.userId,
        note: l.targetNote, action: 'relate',
      }, now);
      return { ok: true, value: row } as const;
    });
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: 'already_linked' };
    throw err;
  }
}

/** Removes a link and notes it on both issues (IssueLinks::DestroyService). */
export async function destroyIssueLink(
  db: Kysely<DB>, link: IssueLinkRow, o: { userId: number; source: IssueRow; target: IssueRow; sourceNote: string; targetNote: string },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const removed = await trx.deleteFrom('issue_links').where('id', '=', link.id).executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) return;
    const now = nowIso();
    for (const [issue, note] of [[o.source, o.sourceNote], [o.target, o.targetNote]] as const) {
      await addSystemNote(trx, {
        project_id: issue.project_id, noteable_type: 'Issue', noteable_id: issue.id, author_id: o.userId, note, action: 'unrelate',
      }, now);
    }
  });
}
