/**
 * Stars (the Service's users_star_projects): one row per user and project, unique on the pair so
 * that two stars sent at once cannot both be written. A project's star count is counted from
 * these rows (project_id index) rather than kept in a counter column: a user's deletion removes
 * their stars by cascade, which a counter would not follow.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('users_star_projects'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_star_projects_user_project').on('users_star_projects').columns(['user_id', 'project_id']).unique()
    .execute();
  await db.schema.createIndex('users_star_projects_project').on('users_star_projects').columns(['project_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('users_star_projects').execute();
}
