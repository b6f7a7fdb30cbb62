/**
 * Presents projects as the viewer may see them, a page in a few queries whatever its length: the
 * namespaces' full paths, the viewer's memberships of the projects and their groups (one
 * statement), and the owners of personal namespaces (one statement).
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { namespacePathsById } from '../../domain/namespaces/namespaces.queries.ts';
import { linkedLevelsOnProjects, membershipsOfUserIn } from '../../domain/members/members.queries.ts';
import { findUsersByIds } from '../../domain/users/users-batch.queries.ts';
import { canOnProject } from '../../domain/permissions/project.policy.ts';
import { starCountsOf } from '../../domain/stars/stars.queries.ts';
import { forkCountsOf, forkedFromOf } from '../../domain/forks/forks.queries.ts';
import { findProjectsByIds } from '../../domain/projects/projects-batch.queries.ts';
import { projectLinksOf } from '../../domain/group-links/group-links.queries.ts';
import {
  presentBasicProjectDetails, presentProject, presentProjectWithAccess,
  type BasicProjectDetails, type NamespaceInfo, type SharedWithGroup,
  type Project, type ProjectPermissions, type ProjectView, type ProjectWithAccess,
} from '../entities/project.ts';

/** Which of the Service's project entities a route answers. */
export type ProjectEntity = 'basic' | 'project' | 'with_access';

/**
 * A member's notification level as the Service's MemberAccess shows it: kiln keeps no
 * notification settings, so every member has the one the Service makes for them on first read,
 * `global` (NotificationSetting.levels[:global] = 3).
 */
const GLOBAL_NOTIFICATION_LEVEL = 3;

interface Placed {
  row: ProjectRow;
  namespace: NamespaceInfo;
  /** The namespace and its ancestors, nearest first. */
  lineage: number[];
}

interface ViewerAccess {
  /** read_project: whether the viewer may see the project at all (a fork's source may be hidden). */
  readable: boolean;
  view: ProjectView;
  permissions: ProjectPermissions;
}

/** What `viewer` may see of each project: its ProjectView and its permissions. */
async function viewerAccess(
  db: Kysely<DB>, viewer: UserRow | null, placed: Placed[], externalUrl: string, entity: ProjectEntity, sshPort: number | undefined,
): Promise<Map<number, ViewerAccess>> {
  const groupIds = [...new Set(placed.flatMap((p) => (p.namespace.namespace.kind === 'group' ? p.lineage : [])))];
  const [memberships, linked] = viewer
    ? await Promise.all([
      membershipsOfUserIn(db, viewer.id, placed.map((p) => p.row.id), groupIds),
      // Sharing with groups (ProjectGroupLink, GroupGroupLink) counts in what the viewer may do.
      linkedLevelsOnProjects(db, viewer.id, placed.map((p) => ({
        id: p.row.id, lineage: p.namespace.namespace.kind === 'group' ? p.lineage : [],
      }))),
    ])
    : [[], new Map<number, number>()];
  const projectLevel = new Map<number, number>();
  const groupLevel = new Map<number, number>();
  for (const m of memberships) (m.source_type === 'Project' ? projectLevel : groupLevel).set(m.source_id, m.access_level);
  // BasicProjectDetails names no owner.
  const ownerIds = entity === 'basic' ? []
    : [...new Set(placed.map((p) => p.namespace.namespace).filter((n) => n.kind === 'user').map((n) => n.owner_id)
      .filter((id): id is number => id !== null))];
  const ids = placed.map((p) => p.row.id);
  const [owners, stars, forks, sources, shared] = await Promise.all([
    ownerIds.length > 0 ? findUsersByIds(db, ownerIds).then((us) => new Map(us.map((u) => [u.id, u]))) : new Map<number, UserRow>(),
    starCountsOf(db, ids),
    forkCountsOf(db, ids),
    // BasicProjectDetails names no source; a source's own source is not shown either.
    entity === 'basic' ? new Map<number, BasicProjectDetails>() : forkSources(db, viewer, ids, externalUrl, sshPort),
    entity === 'basic' ? new Map<number, SharedWithGroup[]>() : sharedWithGroups(db, ids),
  ]);
  const out = new Map<number, ViewerAccess>();
  for (const p of placed) {
    const direct = projectLevel.get(p.row.id) ?? 0;
    // The highest level over the group and its ancestors (Group#highest_group_member).
    const inherited = p.namespace.namespace.kind === 'group' ? Math.max(0, ...p.lineage.map((id) => groupLevel.get(id) ?? 0)) : 0;
    const actor = { user: viewer, accessLevel: Math.max(direct, inherited, linked.get(p.row.id) ?? 0) };
    const ns = p.namespace.namespace;
    const forkedFrom = sources.get(p.row.id);
    out.set(p.row.id, {
      readable: canOnProject(actor, 'read_project', p.row),
      view: {
        externalUrl,
        ...(sshPort === undefined ? {} : { sshPort }),
        readCode: canOnProject(actor, 'download_code', p.row),
        createMergeRequestIn: viewer !== null && canOnProject(actor, 'read_project', p.row),
        admin: viewer?.admin === 1,
        owner: ns.kind === 'user' && ns.owner_id !== null ? owners.get(ns.owner_id) ?? null : null,
        starCount: stars.get(p.row.id) ?? 0,
        ...(entity !== 'basic' && canOnProject(actor, 'read_issue', p.row) ? {
          openIssuesCount: canOnProject(actor, 'read_confidential_issues', p.row)
            ? p.row.open_issues_count : p.row.open_public_issues_count,
        } : {}),
        forksCount: forks.get(p.row.id) ?? 0,
        ...(forkedFrom ? { forkedFrom } : {}),
        sharedWithGroups: shared.get(p.row.id) ?? [],
      },
      permissions: {
        project_access: direct > 0 ? { access_level: direct, notification_level: GLOBAL_NOTIFICATION_LEVEL } : null,
        group_access: inherited > 0 ? { access_level: inherited, notification_level: GLOBAL_NOTIFICATION_LEVEL } : null,
      },
    });
  }
  return out;
}

/** The source of each fork among `ids`, as BasicProjectDetails, where the viewer may read it (lib/api/entities/project.rb). */
async function forkSources(
  db: Kysely<DB>, viewer: UserRow | null, ids: number[], externalUrl: string, sshPort: number | undefined,
): Promise<Map<number, BasicProjectDetails>> {
  const sourceOf = await forkedFromOf(db, ids);
  if (sourceOf.size === 0) return new Map();
  const rows = (await findProjectsByIds(db, [...sourceOf.values()])).filter((r) => r.pending_delete === 0);
  const placed = await place(db, rows);
  const access = await viewerAccess(db, viewer, placed, externalUrl, 'basic', sshPort);
  const presented = new Map<number, BasicProjectDetails>();
  for (const p of placed) {
    const a = access.get(p.row.id)!;
    if (a.readable) presented.set(p.row.id, presentBasicProjectDetails(p.row, p.namespace, a.view));
  }
  const out = new Map<number, BasicProjectDetails>();
  for (const [fork, source] of sourceOf) {
    const shown = presented.get(source);
    if (shown) out.set(fork, shown);
  }
  return out;
}

/** Each project's links to groups, as the Service's SharedGroupWithProject. */
async function sharedWithGroups(db: Kysely<DB>, ids: number[]): Promise<Map<number, SharedWithGroup[]>> {
  const links = ids.length > 0 ? await projectLinksOf(db, ids) : [];
  const out = new Map<number, SharedWithGroup[]>();
  if (links.length === 0) return out;
  const paths = await namespacePathsById(db, [...new Set(links.map((l) => l.group_id))]);
  for (const l of links) {
    const list = out.get(l.project_id) ?? [];
    list.push({
      group_id: l.group_id, group_name: l.group_name, group_full_path: paths.get(l.group_id)?.fullPath ?? '',
      group_access_level: l.group_access, expires_at: l.expires_at,
    });
    out.set(l.project_id, list);
  }
  return out;
}

async function place(db: Kysely<DB>, rows: ProjectRow[]): Promise<Placed[]> {
  const namespaces = await namespacePathsById(db, [...new Set(rows.map((r) => r.namespace_id))]);
  return rows.map((row) => {
    const ns = namespaces.get(row.namespace_id)!;
    return { row, namespace: { namespace: ns.namespace, fullPath: ns.fullPath, fullName: ns.fullName }, lineage: ns.lineage };
  });
}

function presentAs(entity: ProjectEntity, p: Placed, access: ViewerAccess): BasicProjectDetails | Project | ProjectWithAccess {
  if (entity === 'basic') return presentBasicProjectDetails(p.row, p.namespace, access.view);
  if (entity === 'project') return presentProject(p.row, p.namespace, access.view);
  return presentProjectWithAccess(p.row, p.namespace, access.view, access.permissions);
}

export interface ProjectListOptions {
  externalUrl: string;
  /** KILN_SSH_PORT, for ssh_url_to_repo. */
  sshPort?: number;
  viewer: UserRow | null;
  entity: ProjectEntity;
}

export async function presentProjectList(
  db: Kysely<DB>, rows: ProjectRow[], o: ProjectListOptions,
): Promise<(BasicProjectDetails | Project | ProjectWithAccess)[]> {
  const placed = await place(db, rows);
  // BasicProjectDetails needs only whether the code is readable (guests of private projects may
  // not): the membership lookup serves every entity.
  const access = await viewerAccess(db, o.viewer, placed, o.externalUrl, o.entity, o.sshPort);
  return placed.map((p) => presentAs(o.entity, p, access.get(p.row.id)!));
}

/**
 * One project, as a route answers it: `administered` (the Service's user_can_admin_project) when
 * the route passes it and the viewer may administer the project.
 */
export async function presentOneProject(
  db: Kysely<DB>, row: ProjectRow, namespace: NamespaceInfo & { lineage: number[] },
  o: ProjectListOptions & { administered?: { runnersToken: string | null } },
): Promise<BasicProjectDetails | Project | ProjectWithAccess> {
  const placed = { row, namespace, lineage: namespace.lineage };
  const access = (await viewerAccess(db, o.viewer, [placed], o.externalUrl, o.entity, o.sshPort)).get(row.id)!;
  if (o.administered) access.view.administered = o.administered;
  return presentAs(o.entity, placed, access);
}
