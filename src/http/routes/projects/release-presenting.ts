/**
 * Presenting releases (entities/release.ts) for a viewer: the authors, commits, milestones with
 * their issue counts, links and evidence of a page of releases read in a few queries and one git
 * process, and each description rendered as Markdown when `include_html_description` asks.
 */
import type { FastifyRequest } from 'fastify';
import type { ReleaseRow } from '../../../db/tables/releases.ts';
import type { ProjectRow } from '../../../db/tables/projects.ts';
import type { Actor } from '../../../domain/permissions/access.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { findUsersByIds } from '../../../domain/users/users-batch.queries.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { readCommits } from '../../../domain/repositories/git-read.ts';
import { projectRepository } from '../../../domain/repositories/project-repository.ts';
import type { MarkdownRenderer } from '../../../domain/markdown/render-pool.ts';
import {
  evidencesOfReleases, linksOfReleases, milestoneIssueStats, milestonesOfReleases,
} from '../../../domain/releases/releases.queries.ts';
import { presentCommit } from '../../entities/commit.ts';
import { presentUserBasic } from '../../entities/user.ts';
import { presentRelease, type Release } from '../../entities/release.ts';

export interface ReleaseOwner {
  project: ProjectRow;
  fullPath: string;
  actor: Actor;
}

export async function presentReleases(
  request: FastifyRequest, renderer: MarkdownRenderer, owners: Map<number, ReleaseOwner>, rows: ReleaseRow[], includeHtml: boolean,
): Promise<Release[]> {
  const { db, config } = request.server.kiln;
  const ids = rows.map((r) => r.id);
  const [authors, milestones, links, evidences] = await Promise.all([
    findUsersByIds(db, [...new Set(rows.map((r) => r.author_id).filter((id): id is number => id !== null))]),
    milestonesOfReleases(db, ids),
    linksOfReleases(db, ids),
    evidencesOfReleases(db, ids),
  ]);
  const allMilestones = [...milestones.values()].flat();
  const stats = await milestoneIssueStats(db, [...new Set(allMilestones.map((m) => m.id))]);
  const groupIds = [...new Set(allMilestones.map((m) => m.group_id).filter((g): g is number => g !== null))];
  const groupPaths = await namespacePathsById(db, groupIds);
  const commitsByProject = new Map<number, Map<string, ReturnType<typeof presentCommit>>>();
  for (const owner of owners.values()) {
    const shas = rows.filter((r) => r.project_id === owner.project.id && r.sha).map((r) => r.sha!);
    if (!shas.length || !canOnProject(owner.actor, 'download_code', owner.project)) continue;
    const read = await readCommits(projectRepository(config.storages, owner.project).gitDir, shas);
    const webUrl = `${config.externalUrl}/${owner.fullPath}`;
    commitsByProject.set(owner.project.id, new Map([...read].map(([id, c]) => [id, presentCommit(c, webUrl)])));
  }
  const authorById = new Map(authors.map((u) => [u.id, u]));
  const ownHost = new URL(config.externalUrl).host;
  const out: Release[] = [];
  for (const r of rows) {
    const owner = owners.get(r.project_id)!;
    const projectWebUrl = `${config.externalUrl}/${owner.fullPath}`;
    const author = r.author_id === null ? undefined : authorById.get(r.author_id);
    out.push(presentRelease(r, {
      author: author ? presentUserBasic(author, {}, { externalUrl: config.externalUrl, canReadProfile: false }) : null,
      commit: (r.sha && commitsByProject.get(r.project_id)?.get(r.sha)) || null,
      milestones: (milestones.get(r.id) ?? []).map((m) => ({
        row: m,
        ownerWebUrl: m.group_id !== null
          ? `${config.externalUrl}/groups/${groupPaths.get(m.group_id)?.fullPath ?? ''}` : projectWebUrl,
        stats: stats.get(m.id) ?? { total: 0, closed: 0 },
      })),
      links: links.filter((l) => l.release_id === r.id),
      evidences: evidences.filter((e) => e.release_id === r.id),
      descriptionHtml: includeHtml ? await renderer.render(r.description ?? '', { gfm: true, ownHost }) : '',
    }, {
      projectWebUrl, projectPath: owner.project.path, projectWebPath: new URL(projectWebUrl).pathname,
      canDownloadCode: canOnProject(owner.actor, 'download_code', owner.project),
      canReadMilestone: canOnProject(owner.actor, 'read_milestone', owner.project),
      canUpdate: canOnProject(owner.actor, 'update_release', owner.project),
      includeHtml,
    }));
  }
  return out;
}
