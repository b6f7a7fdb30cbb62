/**
 * The fork relationship between existing projects (lib/api/projects.rb 15.2):
 * `POST /projects/:id/fork/:forked_from_id` (ForkService#link_existing_project) makes a project a
 * fork of another and a member of its network; `DELETE /projects/:id/fork`
 * (Projects::UnlinkForkService) closes the open requests between the project and the rest of its
 * network, removes the relationship and takes it out of the network, where its own forks stay
 * with no source. The repository keeps borrowing its objects (objects_from_project_id) until the
 * source goes (borrowed-objects.ts).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { closeForkRequests } from '../merge-requests/close-fork-requests.ts';
import { deleteForkRow, findForkRow, insertForkRow, joinForkNetwork, leaveForkNetwork } from './forks.queries.ts';

/** False when the project is a fork already (its fork row exists). */
export async function linkFork(db: Kysely<DB>, forkId: number, sourceId: number): Promise<boolean> {
  try {
    await db.transaction().execute(async (trx) => {
      await insertForkRow(trx, forkId, sourceId);
      await joinForkNetwork(trx, forkId, sourceId);
    });
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

/** False when the project is not a fork (nothing changed: the route's 304). */
export async function unlinkFork(db: Kysely<DB>, projectId: number, userId: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!await findForkRow(trx, projectId)) return false;
    await closeForkRequests(trx, projectId, userId, { into: true });
    await deleteForkRow(trx, projectId);
    await leaveForkNetwork(trx, projectId);
    return true;
  });
}
