/**
 * Project uploads (the Service's `uploads` rows of FileUploader, POST /projects/:id/uploads):
 * one row per file, found again by the project, the random secret and the file name of its URL
 * (`/<project>/uploads/<secret>/<filename>`). The secret is unique within the project (a unique
 * index, not a check), and the rows go with their project.
 */
import type { Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('project_uploads'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('uploaded_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('project_uploads_project_secret').on('project_uploads').columns(['project_id', 'secret']).unique().execute();
  await db.schema.createIndex('project_uploads_uploaded_by').on('project_uploads').columns(['uploaded_by_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('project_uploads').execute();
}
