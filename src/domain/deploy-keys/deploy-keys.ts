/**
 * Deploy keys (the Service's DeployKey, DeployKeysProject, Projects::EnableDeployKeyService,
 * User#accessible_deploy_keys): creating one on a project or instance-wide, enabling an existing
 * one on another project, changing `can_push` and the title, and removing one from a project (a
 * private key no project uses any more goes with it).
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { KeyRow } from '../../db/tables/keys.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { createKey } from '../keys/create-key.ts';
import { parseSshPublicKey } from '../keys/ssh-public-key.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import { projectActor } from '../permissions/actors.ts';
import { canOnProject } from '../permissions/project.policy.ts';
import {
  deleteDeployKeysProject, deleteOrphanedPrivateDeployKey, findDeployKeyById, findDeployKeyBySha256, findProjectDeployKey,
  findProjectDeployKeyBySha256, insertDeployKeysProject, projectIdsOfKey, type ProjectDeployKey,
} from './deploy-keys.queries.ts';

/** How many of a key's projects are looked at to find one the user maintains (accessible_deploy_keys). */
const MAX_PROJECTS_CHECKED = 100;

/** The user maintains (admin_project) the project: the projects whose deploy keys they may enable elsewhere. */
async function maintains(db: Kysely<DB>, user: UserRow, projectId: number): Promise<boolean> {
  const project = await findProjectById(db, projectId);
  if (!project) return false;
  const paths = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id);
  if (!paths) return false;
  return canOnProject(await projectActor(db, user, project.id, paths.lineage), 'admin_project', project);
}

/**
 * User#accessible_deploy_keys: public keys, and keys enabled on a project the user maintains.
 * Administrators may enable any key (EnableDeployKeyService#find_accessible_key).
 */
export async function isAccessibleDeployKey(db: Kysely<DB>, user: UserRow, key: KeyRow): Promise<boolean> {
  if (key.public === 1 || user.admin) return true;
  for (const projectId of await projectIdsOfKey(db, key.id, MAX_PROJECTS_CHECKED)) {
    if (await maintains(db, user, projectId)) return true;
  }
  return false;
}

class Invalid extends Error {
  readonly errors: Record<string, string[]>;
  constructor(errors: Record<string, string[]>) {
    super('invalid deploy key');
    this.errors = errors;
  }
}

export type DeployKeyResult<T> = { ok: true; value: T } | { ok: false; errors: Record<string, string[]> };

export interface NewDeployKey {
  creator: UserRow;
  title: string;
  key: string;
  expiresAt: string | null;
}

/** POST /deploy_keys: an instance-wide (public) deploy key, on no project yet. */
export async function createPublicDeployKey(db: Kysely<DB>, input: NewDeployKey): Promise<DeployKeyResult<KeyRow>> {
  return createKey(db, {
    userId: input.creator.id, title: input.title, key: input.key, expiresAt: input.expiresAt, usageType: 'auth_and_signing',
    deployKey: { public: true },
  });
}

/**
 * POST /projects/:id/deploy_keys: the key already enabled here is answered as it is; a key the
 * user may reach (accessible_deploy_keys) is enabled here; otherwise a new private key is created
 * and enabled, in one transaction. Errors of a new key are the link's nested attributes
 * (`deploy_key.<field>`), as the Service's nested DeployKeysProject validation names them.
 */
export async function addProjectDeployKey(
  db: Kysely<DB>, projectId: number, input: NewDeployKey & { canPush: boolean },
): Promise<DeployKeyResult<ProjectDeployKey>> {
  const parsed = parseSshPublicKey(input.key);
  if (parsed) {
    const here = await findProjectDeployKeyBySha256(db, projectId, parsed.fingerprintSha256);
    if (here) return { ok: true, value: here };
    const existing = await findDeployKeyBySha256(db, parsed.fingerprintSha256);
    if (existing && await isAccessibleDeployKey(db, input.creator, existing)) {
      const linked = await enableOn(db, projectId, existing, input.canPush);
      if (linked) return { ok: true, value: linked };
    }
  }
  try {
    const keyId = await db.transaction().execute(async (trx) => {
      const created = await createKey(trx, {
        userId: input.creator.id, title: input.title, key: input.key, expiresAt: input.expiresAt, usageType: 'auth_and_signing',
        deployKey: { public: false },
      });
      if (!created.ok) throw new Invalid(created.errors);
      await insertDeployKeysProject(trx, created.value.id, projectId, input.canPush);
      return created.value.id;
    });
    const value = await findProjectDeployKey(db, projectId, keyId);
    if (!value) return { ok: false, errors: { deploy_key: ['is invalid'] } };
    return { ok: true, value };
  } catch (err) {
    if (err instanceof Invalid) {
      return { ok: false, errors: Object.fromEntries(Object.entries(err.errors).map(([field, messages]) => [`deploy_key.${field}`, messages])) };
    }
    throw err;
  }
}

/** Links the key to the project unless it is already (two requests at once: the unique index decides). */
async function enableOn(db: Kysely<DB>, projectId: number, key: KeyRow, canPush: boolean): Promise<ProjectDeployKey | undefined> {
  try {
    await insertDeployKeysProject(db, key.id, projectId, canPush);
  } catch (err) {
    // Enabled by a request beside this one, or the key removed meanwhile (its foreign key).
    if (!isUniqueViolation(err) && !isForeignKeyViolation(err)) throw err;
  }
  return findProjectDeployKey(db, projectId, key.id);
}

function isForeignKeyViolation(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return e.code === '23503' || e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY'
    || (typeof e.message === 'string' && e.message.includes('FOREIGN KEY constraint failed'));
}

/** Projects::EnableDeployKeyService: an accessible key enabled on the project (read-only); undefined: no such key for this user. */
export async function enableDeployKey(db: Kysely<DB>, user: UserRow, projectId: number, keyId: number): Promise<KeyRow | undefined> {
  const key = await findDeployKeyById(db, keyId);
  if (!key || !await isAccessibleDeployKey(db, user, key)) return undefined;
  const linked = await enableOn(db, projectId, key, false);
  return linked ? key : undefined;
}

/** Removes the key from the project; a private key no project uses any more is deleted with it, in one transaction. */
export async function removeProjectDeployKey(db: Kysely<DB>, link: ProjectDeployKey): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await deleteDeployKeysProject(trx, link.link_id);
    await deleteOrphanedPrivateDeployKey(trx, link.id);
  });
}
