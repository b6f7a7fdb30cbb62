/**
 * Creates a group (Groups::CreateService): validates name and path (shared top-level space with
 * usernames; reserved words refused), inserts the namespace and the creator's Owner membership
 * in one transaction, then creates the group wiki repository `<full path>.wiki.git` on the shard
 * the storage weights pick.
 */
import type { Kysely } from 'kysely';
import type { DB, NamespaceRow, UserRow } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import { ACCESS_LEVELS, visibilityName } from '../permissions/access.ts';
import { diskEntry, groupNameError, namespacePathError } from '../namespaces/paths.ts';
import { pathTaken } from '../namespaces/namespaces.queries.ts';
import { insertMember } from '../members/members.queries.ts';
import { insertGroup } from './groups.queries.ts';
import { pickStorage, repositoryPath } from '../repositories/storage.ts';
import crypto from 'node:crypto';
import { createBareRepository, repositoryExists } from '../repositories/repositories.ts';
import { repositoryPathInUse } from '../storage-moves/storage-moves.queries.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { addError, type FieldErrors } from '../projects/create-project.ts';
import { groupLengthErrors } from './update-group.ts';

export interface CreateGroupInput {
  creator: UserRow;
  name: string;
  path: string;
  description: string;
  visibilityLevel: number;
  parent: { row: NamespaceRow; fullPath: string } | null;
}

export type CreateGroupResult = { ok: true; group: NamespaceRow } | { ok: false; errors: FieldErrors };

export async function createGroup(db: Kysely<DB>, shards: StorageShard[], input: CreateGroupInput): Promise<CreateGroupResult> {
  const errors: FieldErrors = groupLengthErrors(input);
  const nameError = errors.name ? null : groupNameError(input.name);
  if (nameError) addError(errors, 'name', nameError);
  const pathError = errors.path ? errors.path[0] : namespacePathError(input.path, input.parent === null);
  if (pathError && !errors.path) addError(errors, 'path', pathError);
  if (input.parent && input.visibilityLevel > input.parent.row.visibility_level) {
    addError(
      errors, 'visibility_level',
      `${visibilityName(input.visibilityLevel)} is not allowed since the parent group has a `
      + `${visibilityName(input.parent.row.visibility_level)} visibility.`,
    );
  }
  if (!pathError && (await pathTaken(db, input.parent?.row.id ?? null, input.path))) addError(errors, 'path', 'has already been taken');
  if (Object.keys(errors).length > 0) return { ok: false, errors };

  const storage = await pickStorage(db, shards);
  const parentDir = input.parent ? `${input.parent.fullPath}/` : '';
  let wikiDiskPath = `${parentDir}${diskEntry(input.path, '.wiki.git')}`;
  // Disk paths stay as they were created while groups may be renamed (update-group.ts), so a
  // new group can meet a path another group's wiki still holds; it then takes a fresh one.
  if (await repositoryExists(repositoryPath(shards, storage, wikiDiskPath)) || await repositoryPathInUse(db, storage, wikiDiskPath)) {
    wikiDiskPath = `${parentDir}${diskEntry(`${input.path}-${crypto.randomBytes(4).toString('hex')}`, '.wiki.git')}`;
  }
  let group: NamespaceRow;
  try {
    group = await db.transaction().execute(async (trx) => {
      const row = await insertGroup(trx, {
        name: input.name, path: input.path, parentId: input.parent?.row.id ?? null, description: input.description,
        visibilityLevel: input.visibilityLevel, storage, wikiDiskPath, createdById: input.creator.id,
      });
      await insertMember(trx, {
        sourceType: 'Namespace', sourceId: row.id, userId: input.creator.id, accessLevel: ACCESS_LEVELS.owner,
        createdById: input.creator.id,
      });
      return row;
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return { ok: false, errors: { path: ['has already been taken'] } };
  }
  try {
    await createBareRepository(repositoryPath(shards, storage, wikiDiskPath));
  } catch (err) {
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom('members').where('source_type', '=', 'Namespace').where('source_id', '=', group.id).execute();
      await trx.deleteFrom('namespaces').where('id', '=', group.id).execute();
    });
    throw err;
  }
  return { ok: true, group };
}
