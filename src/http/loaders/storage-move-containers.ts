/**
 * Presents a page of storage moves with their containers, loading each kind of container (and
 * the project namespaces, snippet authors) in one query per table rather than one per move.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageMoveRow } from '../../db/tables/storage-moves.ts';
import { containerRowsForMoves, type ContainerKind } from '../../domain/storage-moves/storage-moves.queries.ts';
import { namespacePaths, namespacePathsById } from '../../domain/namespaces/namespaces.queries.ts';
import { presentProjectIdentity } from '../entities/project.ts';
import { presentSnippet } from '../entities/snippet.ts';
import { presentBasicMove } from '../entities/storage-move.ts';

export async function presentMoves(db: Kysely<DB>, kind: ContainerKind, moves: StorageMoveRow[], externalUrl: string): Promise<object[]> {
  const rows = await containerRowsForMoves(db, kind, moves.map((m) => m.container_id));
  const containers = new Map<number, object>();
  if (kind === 'project') {
    const namespaces = await namespacePathsById(db, [...new Set(rows.projects.map((p) => p.namespace_id))]);
    for (const p of rows.projects) {
      const ns = namespaces.get(p.namespace_id);
      if (ns) containers.set(p.id, presentProjectIdentity(p, { namespace: ns.namespace, fullPath: ns.fullPath, fullName: ns.fullName }));
    }
  } else if (kind === 'snippet') {
    const authors = new Map(rows.users.map((u) => [u.id, u]));
    for (const s of rows.snippets) {
      const author = authors.get(s.author_id);
      if (!author) continue;
      const { file_name: _f, files: _fs, ...basic } = presentSnippet(s, author, externalUrl);
      containers.set(s.id, basic);
    }
  } else {
    const paths = await namespacePaths(db, rows.groups);
    for (const g of rows.groups) {
      containers.set(g.id, { id: g.id, web_url: `${externalUrl}/groups/${paths.get(g.id)!.fullPath}`, name: g.name });
    }
  }
  return moves.map((m) => ({ ...presentBasicMove(m), [kind]: containers.get(m.container_id) ?? null }));
}
