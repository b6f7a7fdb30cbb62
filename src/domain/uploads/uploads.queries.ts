/** Every Kysely call about project uploads: record one, find one by its URL's parts. */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectUploadRow } from '../../db/tables/uploads.ts';

export function insertProjectUpload(db: Kysely<DB>, row: {
  project_id: number; secret: string; filename: string; size: number; uploaded_by_id: number; created_at: string;
}): Promise<ProjectUploadRow> {
  return db.insertInto('project_uploads').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findProjectUpload(
  db: Kysely<DB>, projectId: number, secret: string, filename: string,
): Promise<ProjectUploadRow | undefined> {
  return db.selectFrom('project_uploads').selectAll()
    .where('project_id', '=', projectId).where('secret', '=', secret).where('filename', '=', filename)
    .executeTakeFirst();
}
