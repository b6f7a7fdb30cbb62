/** The Service's TreeObject (GET /projects/:id/repository/tree) and RepositoryFile entities. */
import { Type, type Static } from 'typebox';

export const TreeObjectSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  path: Type.String(),
  mode: Type.String(),
}, { title: 'TreeObject' });

export type TreeObject = Static<typeof TreeObjectSchema>;

export const RepositoryFileSchema = Type.Object({
  file_name: Type.String(),
  file_path: Type.String(),
  size: Type.Integer(),
  encoding: Type.String(),
  content_sha256: Type.String(),
  ref: Type.String(),
  blob_id: Type.String(),
  commit_id: Type.String(),
  last_commit_id: Type.String(),
  execute_filemode: Type.Boolean(),
  content: Type.String(),
}, { title: 'RepositoryFile' });

export type RepositoryFile = Static<typeof RepositoryFileSchema>;

/** What POST and PUT of a file answer. */
export const FileCommitSchema = Type.Object({ file_path: Type.String(), branch: Type.String() }, { title: 'RepositoryFileCommit' });
