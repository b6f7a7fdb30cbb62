/**
 * The file actions of a snippet write, as the Service 15.2 takes them (app/models/
 * snippet_input_action.rb, snippet_repository.rb, Snippets::UpdateService): each `create`,
 * `update`, `delete` or `move` of one file, checked as SnippetInputAction validates it, then
 * turned into the actions of one commit (repositories/commit-actions.ts). The older single-file
 * form (`file_name` + `content`) becomes the same actions.
 */
import type { CommitAction } from '../repositories/commit-actions.ts';

export const SNIPPET_ACTIONS = ['create', 'update', 'delete', 'move'] as const;
export type SnippetActionName = (typeof SNIPPET_ACTIONS)[number];

export interface SnippetFileAction {
  action: SnippetActionName;
  filePath?: string;
  previousPath?: string;
  content?: string;
}

/** The Service's Snippet::MAX_FILE_COUNT: a snippet's repository holds at most this many files. */
export const MAX_SNIPPET_FILES = 10;
/** A snippet's file name column is varchar(255); each of its paths may become it. */
export const MAX_SNIPPET_PATH = 255;

/** The paths of a snippet's files (column `file_paths`; a snippet written before it has the one `file_name`). */
export function snippetFilePaths(row: { file_paths: string | null; file_name: string }): string[] {
  return row.file_paths === null ? [row.file_name] : (JSON.parse(row.file_paths) as string[]);
}

/** Ruby's `blank?` on a string: empty or only white space. */
export function isBlank(s: string | undefined | null): boolean {
  return s === undefined || s === null || /^[\s\u00a0]*$/.test(s);
}

/**
 * SnippetInputAction's validations: `move` needs the previous path, `update` and `delete` a file
 * path, `create` and `update` content; an `update` keeps its path and a `move` changes it; only
 * `allowed` actions (`create` when a snippet is made).
 */
export function validAction(a: SnippetFileAction, allowed?: readonly SnippetActionName[]): boolean {
  if (!SNIPPET_ACTIONS.includes(a.action)) return false;
  if (a.action === 'move' && isBlank(a.previousPath)) return false;
  if ((a.action === 'update' || a.action === 'delete') && isBlank(a.filePath)) return false;
  if ((a.action === 'create' || a.action === 'update') && isBlank(a.content)) return false;
  if (a.action === 'update' && !isBlank(a.previousPath) && !isBlank(a.filePath) && a.previousPath !== a.filePath) return false;
  if (a.action === 'move' && a.previousPath === a.filePath) return false;
  if (allowed && !allowed.includes(a.action)) return false;
  return true;
}

/** `snippetfile<N>.txt`, the Service's name for a file sent without one (SnippetRepository). */
const EMPTY_FILE_PATTERN = /^snippetfile(\d)\.txt$/;

/** The index the next unnamed file gets: one past the highest `snippetfile<N>.txt` there is. */
function nextEmptyFileIndex(existing: readonly string[]): number {
  const indexes = existing.map((p) => EMPTY_FILE_PATTERN.exec(p)?.[1]).filter((d): d is string => d !== undefined);
  return indexes.length === 0 ? 1 : Math.max(...indexes.map(Number)) + 1;
}

/**
 * The commit actions for `actions` on a repository holding `existing`: a file without a path gets
 * `snippetfile<N>.txt`, an `update` without a previous path updates its own path, and `move`
 * without content keeps the file's content.
 */
export function toCommitActions(actions: SnippetFileAction[], existing: readonly string[]): CommitAction[] {
  let next = nextEmptyFileIndex(existing);
  return actions.map((a) => {
    let filePath = a.filePath ?? '';
    if (isBlank(filePath)) filePath = `snippetfile${next++}.txt`;
    const previousPath = a.action === 'update' ? (isBlank(a.previousPath) ? filePath : a.previousPath) : a.previousPath;
    return {
      action: a.action, filePath,
      ...(previousPath !== undefined ? { previousPath } : {}),
      ...(a.content !== undefined ? { content: Buffer.from(a.content) } : {}),
    };
  });
}

/**
 * The older form of an update (`file_name`, `content`) as one action on the snippet's one file
 * (Snippets::UpdateService#build_actions_from_params): a new name moves it, new content updates
 * it. Null when nothing would change.
 */
export function legacyUpdateAction(
  current: string | null, fileName: string | undefined, content: string | undefined,
): SnippetFileAction | null {
  const filePath = fileName ?? current ?? undefined;
  if (current === null) return { action: 'create', filePath, content: content ?? '' };
  if (filePath !== current) return { action: 'move', previousPath: current, filePath, content };
  if (content === undefined) return null;
  return { action: 'update', previousPath: current, filePath, content };
}
