/**
 * Writing releases as the Service's Releases::CreateService / UpdateService / DestroyService
 * (15.2) do, once the caller's permission and the tag have been settled by the route: the release
 * row, its asset links and milestones in one transaction, and on creation the evidence the Free
 * tier collects (Releases::CreateEvidenceService: a JSON summary of the release, its project and
 * its milestones with their issues, and the summary's SHA-256), except for a historical release
 * (released before it was created) or an upcoming one (released in the future), which the Service
 * leaves without evidence.
 */
import { queueObjectHook } from '../web-hooks/object-hooks.ts';
import { createHash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ReleaseRow } from '../../db/tables/releases.ts';
import type { MilestoneRow } from '../../db/tables/labels.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';
import {
  deleteReleaseRow, insertEvidence, insertLink, insertRelease, issuesOfMilestones, projectSummary, setReleaseMilestones, updateReleaseRow,
} from './releases.queries.ts';
import { fullMessages, linkErrors, type LinkAttributes } from './link-attributes.ts';

export type ReleaseWriteResult =
  | { ok: true; release: ReleaseRow }
  | { ok: false; status: 400 | 409; message: string };

export interface NewRelease {
  projectId: number;
  tag: string;
  sha: string;
  name: string | null;
  description: string | null;
  authorId: number;
  releasedAt: string | null;
  links: LinkAttributes[];
  milestones: MilestoneRow[];
}

function duplicates(values: string[]): string[] {
  return [...new Set(values.filter((v, i) => values.indexOf(v) !== i))];
}

/** Released before it was created (Release#historical_release?, compared in whole seconds). */
function isHistorical(r: ReleaseRow): boolean {
  return Math.floor(Date.parse(r.released_at) / 1000) < Math.floor(Date.parse(r.created_at) / 1000);
}

export function isUpcoming(r: ReleaseRow, now = Date.now()): boolean {
  return Date.parse(r.released_at) > now;
}

/**
 * Why the release's links would make it invalid (the Service's `Validation failed: …`), or null.
 * The route asks before it tags `ref`, so that a refused release leaves no new tag behind.
 */
export function releaseLinksRefusal(links: LinkAttributes[]): string | null {
  const messages = links.flatMap((l) => fullMessages('Links ', linkErrors(l)));
  for (const field of ['name', 'url'] as const) {
    const dup = duplicates(links.map((l) => l[field]));
    if (dup.length) messages.push(`Links have duplicate values (${dup.join(', ')}) for ${field}`);
  }
  return messages.length ? `Validation failed: ${messages.join(', ')}` : null;
}

export async function createRelease(db: Kysely<DB>, o: NewRelease): Promise<ReleaseWriteResult> {
  const refusal = releaseLinksRefusal(o.links);
  if (refusal) return { ok: false, status: 400, message: refusal };
  const now = nowIso();
  try {
    const release = await db.transaction().execute(async (trx) => {
      const row = await insertRelease(trx, {
        project_id: o.projectId, tag: o.tag, name: o.name ?? o.tag, description: o.description, author_id: o.authorId,
        sha: o.sha, created_at: now, updated_at: now, released_at: o.releasedAt ?? now,
      });
      for (const l of o.links) {
        await insertLink(trx, { release_id: row.id, ...l, created_at: now, updated_at: now });
      }
      await setReleaseMilestones(trx, row.id, o.milestones.map((m) => m.id));
      if (!isHistorical(row) && !isUpcoming(row)) await collectEvidence(trx, row, o.milestones);
      // The release webhooks (Releases::CreateService#execute_hooks, action create).
      await queueObjectHook(trx, { kind: 'release', id: row.id, projectId: o.projectId, action: 'create' });
      return row;
    });
    return { ok: true, release };
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, status: 409, message: 'Release already exists' };
    throw err;
  }
}

/** Evidences::EvidenceEntity of the Service: what was in the release when it was published. */
async function collectEvidence(db: Kysely<DB> | Transaction<DB>, release: ReleaseRow, milestones: MilestoneRow[]): Promise<void> {
  const project = await projectSummary(db, release.project_id);
  const issues = await issuesOfMilestones(db, milestones.map((m) => m.id));
  const summary = JSON.stringify({
    release: {
      id: release.id, tag_name: release.tag, name: release.name, description: release.description,
      created_at: release.created_at,
      project: { id: project.id, name: project.name, description: project.description, created_at: project.created_at },
      milestones: milestones.map((m) => ({
        id: m.id, title: m.title, description: m.description, state: m.state, iid: m.iid, created_at: m.created_at,
        due_date: m.due_date,
        issues: issues.filter((i) => i.milestone_id === m.id).map((i) => ({
          id: i.id, title: i.title, description: i.description,
          author: { id: i.author_id, name: i.author_name, email: i.author_email },
          state: i.state, iid: i.iid, confidential: Boolean(i.confidential), created_at: i.created_at, due_date: i.due_date,
        })),
      })),
    },
  });
  await insertEvidence(db, {
    release_id: release.id, summary, summary_sha: createHash('sha256').update(summary).digest('hex'), created_at: nowIso(),
  });
}

export interface ReleaseChanges {
  name?: string;
  description?: string;
  releasedAt?: string;
  /** Replaces the release's milestones when given ([] removes them all). */
  milestones?: MilestoneRow[];
}

export async function updateRelease(db: Kysely<DB>, release: ReleaseRow, c: ReleaseChanges): Promise<ReleaseRow> {
  return db.transaction().execute(async (trx) => {
    const set: Record<string, string> = { updated_at: nowIso() };
    if (c.name !== undefined) set.name = c.name;
    if (c.description !== undefined) set.description = c.description;
    if (c.releasedAt !== undefined) set.released_at = c.releasedAt;
    const row = (await updateReleaseRow(trx, release.id, set)) ?? release;
    if (c.milestones) await setReleaseMilestones(trx, release.id, c.milestones.map((m) => m.id));
    await queueObjectHook(trx, { kind: 'release', id: release.id, projectId: release.project_id, action: 'update' });
    return row;
  });
}

/** Deletes the release with its links, milestone associations and evidence; the tag stays. */
export async function deleteRelease(db: Kysely<DB>, releaseId: number): Promise<void> {
  await deleteReleaseRow(db, releaseId);
}
