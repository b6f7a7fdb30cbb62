/**
 * Instance-wide counts for GET /application/statistics (the Service's
 * lib/api/entities/application_statistics.rb). The Service reads approximate counts from its
 * planner's statistics for large tables; kiln counts exactly, each count one indexed scan.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';

export interface ApplicationCounts {
  forks: number; issues: number; merge_requests: number; notes: number; snippets: number; ssh_keys: number;
  milestones: number; users: number; projects: number; groups: number; active_users: number;
}

export async function applicationCounts(db: Kysely<DB>): Promise<ApplicationCounts> {
  const count = async (table: 'issues' | 'merge_requests' | 'notes' | 'snippets' | 'keys' | 'milestones' | 'users' | 'projects') =>
    Number((await db.selectFrom(table).select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()).n);
  const [issues, mergeRequests, notes, snippets, keys, milestones, users, projects, groups, active] = await Promise.all([
    count('issues'), count('merge_requests'), count('notes'), count('snippets'), count('keys'), count('milestones'),
    count('users'), count('projects'),
    db.selectFrom('namespaces').select(sql<number>`count(*)`.as('n')).where('kind', '=', 'group').executeTakeFirstOrThrow(),
    db.selectFrom('users').select(sql<number>`count(*)`.as('n')).where('state', '=', 'active').executeTakeFirstOrThrow(),
  ]);
  return {
    // kiln has no forking, so there are no fork network members to count.
    forks: 0,
    issues, merge_requests: mergeRequests, notes, snippets, ssh_keys: keys, milestones, users, projects,
    groups: Number(groups.n), active_users: Number(active.n),
  };
}
