/**
 * The repository storage move entities (reference §4): BasicRepositoryStorageMove, and one
 * variant per kind of container adding it — `project` (ProjectIdentity), `snippet` (BasicSnippet)
 * and `group` ({id, web_url, name}). `state` is the lowercase state name (reference §11).
 */
import { Type, type Static } from 'typebox';
import type { StorageMoveRow } from '../../db/tables/storage-moves.ts';
import { stateName } from '../../domain/storage-moves/state-machine.ts';
import { ProjectIdentitySchema } from './project.ts';
import { SnippetSchema } from './snippet.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const BasicRepositoryStorageMoveSchema = Type.Object({
  id: Type.Integer(),
  created_at: Type.String(),
  state: Type.String(),
  source_storage_name: Type.String(),
  destination_storage_name: Type.String(),
  error_message: NString,
}, { title: 'BasicRepositoryStorageMove' });

const { file_name: _fileName, files: _files, ...basicSnippet } = SnippetSchema.properties;
export const BasicSnippetSchema = Type.Object(basicSnippet, { title: 'BasicSnippet' });

export const GroupIdentitySchema = Type.Object(
  { id: Type.Integer(), web_url: Type.String(), name: Type.String() }, { title: 'GroupIdentity' },
);

export const ProjectRepositoryStorageMoveSchema = Type.Object({
  ...BasicRepositoryStorageMoveSchema.properties,
  project: Type.Union([ProjectIdentitySchema, Type.Null()]),
}, { title: 'ProjectRepositoryStorageMove' });

export const SnippetRepositoryStorageMoveSchema = Type.Object({
  ...BasicRepositoryStorageMoveSchema.properties,
  snippet: Type.Union([BasicSnippetSchema, Type.Null()]),
}, { title: 'SnippetRepositoryStorageMove' });

export const GroupRepositoryStorageMoveSchema = Type.Object({
  ...BasicRepositoryStorageMoveSchema.properties,
  group: Type.Union([GroupIdentitySchema, Type.Null()]),
}, { title: 'GroupRepositoryStorageMove' });

export type BasicRepositoryStorageMove = Static<typeof BasicRepositoryStorageMoveSchema>;

export function presentBasicMove(m: StorageMoveRow): BasicRepositoryStorageMove {
  return {
    id: m.id,
    created_at: m.created_at,
    state: stateName(m.state),
    source_storage_name: m.source_storage_name,
    destination_storage_name: m.destination_storage_name,
    error_message: m.error_message,
  };
}
