/**
 * Redirect routes (the Service's RedirectRoute, app/models/redirect_route.rb): the old full paths
 * of a project moved to another namespace (or below a group that moved), so API and git requests
 * naming the old path still reach it. One path names at most one project (unique, whatever the
 * case); a path a project lives at again stops redirecting (its row goes with the move).
 */
import { sql, type Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('redirect_routes'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index redirect_routes_path_lower on redirect_routes (lower(path))`.execute(db);
  await db.schema.createIndex('redirect_routes_project').on('redirect_routes').column('project_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('redirect_routes').execute();
}
