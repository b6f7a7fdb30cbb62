/**
 * Protected branches and tags (issue 30, item 3), as the Service's CE keeps them: a protected
 * branch or tag is a name or a wildcard pattern (`release-*`) of one project, unique per project;
 * each carries role-based access levels (push and merge for branches, create for tags) in tables
 * of their own so that every level has the id the API shows.
 *
 * Existing projects: the Service protects a project's default branch when that branch first comes
 * to be (Projects::ProtectDefaultBranchService, by the `default_branch_protection` setting). Projects
 * made before this migration never had that chance, and kiln has so far treated their default
 * branch as protected for CI (protected variables reached its jobs, CI_COMMIT_REF_PROTECTED was
 * true). This migration protects each existing default branch as the Service would have at its
 * creation, with the setting's current value: the CI behaviour stays as it was, and the projects
 * look as the same projects would on the Service. A setting of 0 (no protection) protects nothing.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

const ts = (t: { addColumn: any }) => t.addColumn('created_at', 'text', (c: any) => c.notNull())
  .addColumn('updated_at', 'text', (c: any) => c.notNull());

/** Gitlab::Access::BranchProtection: 0 none, 1 developers can push, 2 full, 3 developers can merge. */
function levelsFor(protection: number): { push: number; merge: number } | null {
  if (protection === 0) return null;
  return { push: protection === 1 ? 30 : 40, merge: protection === 3 ? 30 : 40 };
}

export async function up(db: Kysely<any>): Promise<void> {
  await ts(withId(db, db.schema.createTable('protected_branches'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('allow_force_push', 'integer', (c) => c.notNull().defaultTo(0)))
    .execute();
  await db.schema.createIndex('protected_branches_project_name').on('protected_branches').columns(['project_id', 'name']).unique().execute();

  await ts(withId(db, db.schema.createTable('protected_branch_access_levels'))
    .addColumn('protected_branch_id', 'integer', (c) => c.notNull().references('protected_branches.id').onDelete('cascade'))
    // 'push' | 'merge'
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('access_level', 'integer', (c) => c.notNull()))
    .execute();
  await db.schema.createIndex('protected_branch_access_levels_branch').on('protected_branch_access_levels')
    .columns(['protected_branch_id', 'action']).execute();

  await ts(withId(db, db.schema.createTable('protected_tags'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull()))
    .execute();
  await db.schema.createIndex('protected_tags_project_name').on('protected_tags').columns(['project_id', 'name']).unique().execute();

  await ts(withId(db, db.schema.createTable('protected_tag_create_access_levels'))
    .addColumn('protected_tag_id', 'integer', (c) => c.notNull().references('protected_tags.id').onDelete('cascade'))
    .addColumn('access_level', 'integer', (c) => c.notNull()))
    .execute();
  await db.schema.createIndex('protected_tag_create_access_levels_tag').on('protected_tag_create_access_levels')
    .columns(['protected_tag_id']).execute();

  // The existing default branches (see above).
  const stored = await db.selectFrom('application_settings').select('value').where('name', '=', 'default_branch_protection').executeTakeFirst();
  const protection = stored ? Number(JSON.parse(stored.value)) : 2;
  const levels = levelsFor([0, 1, 2, 3].includes(protection) ? protection : 2);
  if (!levels) return;
  const now = new Date().toISOString();
  const projects = await db.selectFrom('projects').select(['id', 'default_branch'])
    .where('default_branch', 'is not', null).where('empty_repo', '=', 0).execute();
  for (const p of projects as { id: number; default_branch: string }[]) {
    const row = await db.insertInto('protected_branches')
      .values({ project_id: p.id, name: p.default_branch, allow_force_push: 0, created_at: now, updated_at: now })
      .returning('id').executeTakeFirstOrThrow();
    await db.insertInto('protected_branch_access_levels').values([
      { protected_branch_id: row.id, action: 'push', access_level: levels.push, created_at: now, updated_at: now },
      { protected_branch_id: row.id, action: 'merge', access_level: levels.merge, created_at: now, updated_at: now },
    ]).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('protected_tag_create_access_levels').execute();
  await db.schema.dropTable('protected_tags').execute();
  await db.schema.dropTable('protected_branch_access_levels').execute();
  await db.schema.dropTable('protected_branches').execute();
}
