/**
 * Which repository a smart-HTTP path names, and what the client may do with it:
 * `/<namespace…>/<project>.git` (a project), `/<namespace…>/<project>.wiki.git` (its wiki),
 * `/<group…>.wiki.git` (a group wiki),
 * `/snippets/<id>.git` (a personal snippet) and `/<namespace…>/<project>/snippets/<id>.git` (a
 * project's snippet, read by ProjectSnippetPolicy).
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../db/types.ts';
import { findNamespaceById, findNamespaceByFullPath, namespacePaths } from '../domain/namespaces/namespaces.queries.ts';
import { findProjectByIdOrPath } from '../domain/projects/projects.queries.ts';
import { findProjectSnippet, findSnippetById } from '../domain/snippets/snippets.queries.ts';
import { canOnProjectSnippet } from '../domain/snippets/project-snippet.policy.ts';
import { groupActor, projectActor } from '../domain/permissions/actors.ts';
import { canOnProject } from '../domain/permissions/project.policy.ts';
import { canOnGroup } from '../domain/permissions/group.policy.ts';
import { canOnSnippet } from '../domain/snippets/snippet.policy.ts';
import { ACCESS_LEVELS } from '../domain/permissions/access.ts';
import { isStorableId } from '../db/constraints.ts';
import { refActorFor } from '../domain/protected-refs/protected-refs.ts';
import type { RefActor } from '../domain/protected-refs/ref-rules.ts';
import type { StorageShard } from '../config/schema.ts';
import { ensureWikiRepository, wikiDiskPath } from '../domain/wikis/wiki-repository.ts';
import { collaborationBranches } from '../domain/merge-requests/fork-source.ts';

export interface RepositoryTarget {
  kind: 'project' | 'wiki' | 'project_wiki' | 'snippet';
  id: number;
  storage: string;
  diskPath: string;
  readOnly: boolean;
  archived: boolean;
  /** A project's: the ids of its namespace and the namespace's ancestors (who a group's deploy token reaches). */
  lineage?: readonly number[];
  /** A project's: false when its repository feature is disabled (nothing is reachable with a deploy token then). */
  repositoryEnabled?: boolean;
  /** What `user` (null: anonymous) may do, by the policy of the container. */
  permissions(user: UserRow | null): Promise<{ read: boolean; download: boolean; push: boolean }>;
  /** A project wiki's: creates its repository when it is used for the first time (Wiki#wiki). */
  ensureRepository?(): Promise<void>;
  /**
   * A project's: who pushes, as its protected branches and tags judge them, what the checks print,
   * and the branches someone without push_code may push to because a merge request allows collaboration.
   */
  pushContext?(user: UserRow | null): Promise<{
    actor: RefActor | null; defaultBranch: string | null; fullPath: string; collaborationBranches: string[];
  }>;
  /** A project's: the branches `user` may push to only as a merge request's collaborator (Project#branch_allows_collaboration?). */
  collaborationBranches?(user: UserRow): Promise<string[]>;
}

export async function findRepositoryTarget(db: Kysely<DB>, shards: StorageShard[], fullPath: string): Promise<RepositoryTarget | null> {
  const snippet = /^snippets\/(\d+)\.git$/.exec(fullPath);
  if (snippet) {
    // An id past the column's range names no snippet, as the API's path ids (issue 35, item 13):
    // PostgreSQL would refuse to compare it with an `integer` column rather than find nothing.
    const id = Number(snippet[1]);
    const row = isStorableId(id) ? await findSnippetById(db, id) : undefined;
    if (!row || row.project_id !== null) return null;
    return {
      kind: 'snippet', id: row.id, storage: row.repository_storage, diskPath: row.disk_path, readOnly: row.read_only === 1, archived: false,
      // Snippet content changes through the API, which keeps the row and the repository in step.
      permissions: async (user) => {
        const read = canOnSnippet(user, 'read_snippet', row);
        return { read, download: read, push: false };
      },
    };
  }
  const projectSnippet = /^(.+)\/snippets\/(\d+)\.git$/.exec(fullPath);
  if (projectSnippet) return projectSnippetTarget(db, projectSnippet[1], Number(projectSnippet[2]));
  if (fullPath.endsWith('.wiki.git')) {
    const group = await findNamespaceByFullPath(db, fullPath.slice(0, -'.wiki.git'.length));
    if (group && group.kind === 'group' && group.wiki_disk_path && group.repository_storage) {
      const lineage = (await namespacePaths(db, [group])).get(group.id)!.lineage;
      return {
        kind: 'wiki', id: group.id, storage: group.repository_storage, diskPath: group.wiki_disk_path,
        readOnly: group.read_only === 1, archived: false,
        permissions: async (user) => {
          const actor = await groupActor(db, user, lineage);
          const read = canOnGroup(actor, 'read_group', group);
          // Group wikis: readers clone, Developers and above write (the Service's create_wiki).
          return { read, download: read, push: Boolean(user?.admin) || actor.accessLevel >= ACCESS_LEVELS.developer };
        },
      };
    }
  }
  if (fullPath.endsWith('.wiki.git')) {
    const wiki = await projectWikiTarget(db, shards, fullPath.slice(0, -'.wiki.git'.length));
    if (wiki) return wiki;
  }
  if (!fullPath.endsWith('.git')) return null;
  const project = await findProjectByIdOrPath(db, fullPath.slice(0, -'.git'.length));
  if (!project || /^\d+$/.test(fullPath.slice(0, -'.git'.length))) return null;
  const ns = await findNamespaceById(db, project.namespace_id);
  if (!ns) return null;
  const lineage = (await namespacePaths(db, [ns])).get(ns.id)!.lineage;
  return {
    kind: 'project', id: project.id, storage: project.repository_storage, diskPath: project.disk_path,
    readOnly: project.read_only === 1, archived: project.archived === 1, lineage,
    repositoryEnabled: project.repository_access_level > 0,
    permissions: async (user) => {
      const actor = await projectActor(db, user, project.id, lineage);
      return {
        read: canOnProject(actor, 'read_project', project),
        download: canOnProject(actor, 'download_code', project),
        push: canOnProject(actor, 'push_code', { ...project, archived: 0 }),
      };
    },
    pushContext: async (user) => {
      const actor = refActorFor(await projectActor(db, user, project.id, lineage), project);
      return {
        actor, defaultBranch: project.default_branch, fullPath: fullPath.slice(0, -'.git'.length),
        collaborationBranches: user && !actor?.canPushCode ? await collaborationBranches(db, user, project) : [],
      };
    },
    collaborationBranches: (user) => collaborationBranches(db, user, project),
  };
}

/**
 * A project's wiki (`<project>.wiki.git`): read with read_wiki (download_wiki_code goes with it),
 * pushed with create_wiki (GitAccessWiki), both following the wiki feature; the repository lives
 * inside the project's (domain/wikis/wiki-repository.ts) and its writes are the project's.
 */
async function projectWikiTarget(db: Kysely<DB>, shards: StorageShard[], projectPath: string): Promise<RepositoryTarget | null> {
  const project = /^\d+$/.test(projectPath) ? undefined : await findProjectByIdOrPath(db, projectPath);
  const ns = project ? await findNamespaceById(db, project.namespace_id) : undefined;
  if (!project || !ns) return null;
  const lineage = (await namespacePaths(db, [ns])).get(ns.id)!.lineage;
  return {
    kind: 'project_wiki', id: project.id, storage: project.repository_storage, diskPath: wikiDiskPath(project.disk_path),
    readOnly: project.read_only === 1, archived: project.archived === 1, lineage,
    permissions: async (user) => {
      const actor = await projectActor(db, user, project.id, lineage);
      const read = canOnProject(actor, 'read_project', project) && canOnProject(actor, 'read_wiki', project);
      return { read, download: read, push: read && canOnProject(actor, 'create_wiki', { ...project, archived: 0 }) };
    },
    ensureRepository: async () => {
      await ensureWikiRepository(shards, project);
    },
  };
}

async function projectSnippetTarget(db: Kysely<DB>, projectPath: string, id: number): Promise<RepositoryTarget | null> {
  const project = /^\d+$/.test(projectPath) ? undefined : await findProjectByIdOrPath(db, projectPath);
  const row = project && isStorableId(id) ? await findProjectSnippet(db, project.id, id) : undefined;
  const ns = project && row ? await findNamespaceById(db, project.namespace_id) : undefined;
  if (!project || !row || !ns) return null;
  const lineage = (await namespacePaths(db, [ns])).get(ns.id)!.lineage;
  return {
    kind: 'snippet', id: row.id, storage: row.repository_storage, diskPath: row.disk_path, readOnly: row.read_only === 1, archived: false,
    permissions: async (user) => {
      const actor = await projectActor(db, user, project.id, lineage);
      const read = canOnProjectSnippet(actor, 'read_snippet', project, row);
      return { read, download: read, push: false };
    },
  };
}
