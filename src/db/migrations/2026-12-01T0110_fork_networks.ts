/**
 * Fork networks (the Service's fork_networks and fork_network_members): every project forked from
 * another, and the project at the top of that family, belongs to one network, and stays in it
 * when the project it was forked from, even the root, is deleted (the root's id becomes null, the
 * forks' forked_from too: project_forks). "Same network" (a merge request between two projects)
 * is a question of these rows, no longer of walking forked_from chains, which a deleted root cuts.
 *
 * Filled from the existing project_forks chains: each chain's top is the root of one network (a
 * top that is itself a fork lost its source before this migration: its network has no root).
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('fork_networks'))
    .addColumn('root_project_id', 'integer', (c) => c.references('projects.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('fork_networks_root').on('fork_networks').column('root_project_id').unique().execute();
  await db.schema.createTable('fork_network_members')
    .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('fork_network_id', 'integer', (c) => c.notNull().references('fork_networks.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('fork_network_members_network').on('fork_network_members')
    .columns(['fork_network_id', 'project_id']).execute();

  const rows = await db.selectFrom('project_forks').select(['project_id', 'forked_from_project_id']).execute() as
    { project_id: number; forked_from_project_id: number | null }[];
  const parent = new Map(rows.map((r) => [r.project_id, r.forked_from_project_id]));
  const topOf = (id: number): number => {
    let at = id;
    const seen = new Set<number>([at]);
    for (let next = parent.get(at); next != null && !seen.has(next); next = parent.get(at)) {
      at = next;
      seen.add(at);
    }
    return at;
  };
  const families = new Map<number, Set<number>>();
  for (const r of rows) {
    const top = topOf(r.project_id);
    const family = families.get(top) ?? new Set<number>([top]);
    family.add(r.project_id);
    families.set(top, family);
  }
  const now = new Date().toISOString();
  for (const [top, family] of families) {
    // A top that is a fork itself has lost its source: a network whose root is gone.
    const root = parent.has(top) ? null : top;
    const network = await db.insertInto('fork_networks').values({ root_project_id: root, created_at: now })
      .returning('id').executeTakeFirstOrThrow() as { id: number };
    const members = [...family].map((project_id) => ({ project_id, fork_network_id: network.id, created_at: now }));
    // In slices: SQLite bounds the parameters of one statement.
    for (let i = 0; i < members.length; i += 200) await db.insertInto('fork_network_members').values(members.slice(i, i + 200)).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('fork_network_members').execute();
  await db.schema.dropTable('fork_networks').execute();
}
