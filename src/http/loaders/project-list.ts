/** Presents a page of project rows: their namespaces' full paths in a few queries, then the entity. */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { namespacePathsById } from '../../domain/namespaces/namespaces.queries.ts';
import { presentProject, presentProjectWithAdmin, type Project, type ProjectWithAdmin } from '../entities/project.ts';

export async function presentProjectList(db: Kysely<DB>, rows: ProjectRow[], o: { externalUrl: string; admin: boolean }): Promise<(Project | ProjectWithAdmin)[]> {
  const namespaces = await namespacePathsById(db, rows.map((r) => r.namespace_id));
  return rows.map((row) => {
    const ns = namespaces.get(row.namespace_id)!;
    return o.admin ? presentProjectWithAdmin(row, ns, o.externalUrl) : presentProject(row, ns, o.externalUrl);
  });
}
