/**
 * What personal and project snippets' write routes share (lib/api/snippets.rb,
 * lib/api/project_snippets.rb with API::Helpers::SnippetsHelpers): their parameters, Grape's rules
 * the declarations cannot say, the file actions they become, the services' refusals in the
 * Service's words, and the visibility a snippet may get.
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../../db/types.ts';
import { SNIPPET_CONTENT_MAX, type SnippetFailure } from '../../../domain/snippets/create-snippet.ts';
import { isBlank, SNIPPET_ACTIONS, type SnippetFileAction } from '../../../domain/snippets/snippet-actions.ts';
import { MAX_FILE_PATH_BYTES } from '../../../domain/repositories/file-paths.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import { defaultVisibilityLevel, restrictedVisibilityError } from '../../../domain/settings/visibility.ts';
import { VISIBILITIES, visibilityLevel, type Visibility } from '../../../domain/permissions/access.ts';
import { ApiError, invalidParams, missingAttribute, notFound, validationFailed } from '../../errors.ts';
import { INVALID_FILE_PATH, validFilePathParam } from '../../input/file-path-param.ts';
import { P } from '../../input/params.ts';

// Snippet's title is varchar(255) (issue 13); contents are bounded by the size limit (the
// request body limit stops sooner) and paths as file-paths.ts bounds them before git sees them.
const content = P.string({ maxLength: SNIPPET_CONTENT_MAX });
const filePath = P.string({ maxLength: MAX_FILE_PATH_BYTES });
export const createSnippetProps = {
  title: P.name(),
  description: P.optional(P.string()),
  visibility: P.optional(P.oneOf(VISIBILITIES, { description: 'default private' })),
  files: P.optional(P.array(P.object({ file_path: P.optional(filePath), content: P.optional(content) }), { description: 'the files' })),
  content: P.optional(content),
  file_name: P.optional(filePath),
};
export const createSnippetRules = { mutuallyExclusive: [['files', 'content']] };
export const updateSnippetProps = {
  content: P.optional(content),
  description: P.optional(P.string()),
  file_name: P.optional(filePath),
  title: P.optional(P.name()),
  visibility: P.optional(P.oneOf(VISIBILITIES)),
  files: P.optional(P.array(P.object({
    action: P.optional(P.string({ maxLength: 255, description: SNIPPET_ACTIONS.join(', ') })),
    content: P.optional(content), file_path: P.optional(filePath), previous_path: P.optional(filePath),
  }), { description: 'actions on the files' })),
};
export const updateSnippetRules = {
  atLeastOneOf: [['content', 'description', 'files', 'file_name', 'title', 'visibility']],
  mutuallyExclusive: [['files', 'content'], ['files', 'file_name']],
};

export interface FileParam { action?: string; file_path?: string; previous_path?: string; content?: string }

/**
 * Grape's rules for what the declarations above cannot say (`allow_blank: false`, `given`,
 * `exactly_one_of`, the nested `requires` and `values` of `files`): a missing attribute in the
 * spec's shape first, then every other message in Grape's.
 */
export function checkSnippetParams(
  input: { title?: string; content?: string; file_name?: string; files?: FileParam[] | null }, creating: boolean,
): void {
  const errors: string[] = [];
  let missing: string | undefined;
  if (input.title !== undefined && isBlank(input.title)) errors.push('title is empty');
  (input.files ?? []).forEach((f, i) => {
    const name = (key: string) => `files[${i}][${key}]`;
    if (creating) {
      for (const key of ['file_path', 'content'] as const) {
        if (f[key] === undefined) missing ??= name(key);
        else if (isBlank(f[key])) errors.push(`${name(key)} is empty`);
      }
    } else if (f.action === undefined) {
      missing ??= name('action');
    } else if (!(SNIPPET_ACTIONS as readonly string[]).includes(f.action)) {
      errors.push(`${name('action')} does not have a valid value`);
    }
    for (const key of ['file_path', 'previous_path'] as const) {
      if (f[key] !== undefined && !isBlank(f[key]) && !validFilePathParam(f[key]!)) errors.push(`${name(key)} ${INVALID_FILE_PATH}`);
    }
  });
  if (input.content !== undefined && isBlank(input.content)) errors.push('content is empty');
  if (creating && input.content !== undefined && input.file_name === undefined) missing ??= 'file_name';
  // `files=` (blank) is Grape's nil: given without a value, so no files either.
  if (creating && input.content === undefined && input.files == null) {
    errors.push('files, content are missing, exactly one parameter must be provided');
  }
  if (missing !== undefined) throw missingAttribute(missing);
  if (errors.length > 0) throw invalidParams(errors);
}

export function fileActions(files: FileParam[], creating: boolean): SnippetFileAction[] {
  return files.map((f) => ({
    action: creating ? 'create' : (f.action as SnippetFileAction['action']),
    ...(f.file_path !== undefined ? { filePath: f.file_path } : {}),
    ...(f.previous_path !== undefined ? { previousPath: f.previous_path } : {}),
    ...(f.content !== undefined ? { content: f.content } : {}),
  }));
}

/**
 * A refused write in the Service's words: the services' errors are rendered as
 * `render_api_error!({error: <full messages>}, status)` (lib/api/snippets.rb).
 */
export function snippetRefusal(reason: SnippetFailure, verb: 'creating' | 'updating'): ApiError {
  switch (reason) {
    case 'not_found': return notFound('Snippet');
    case 'invalid_actions': return new ApiError(422, { message: { error: 'Snippet actions have invalid data' } });
    case 'multiple_files':
      return new ApiError(400, { message: { error: 'To update Snippets with multiple files, you must use the `files` parameter' } });
    case 'file_name_too_long': return validationFailed({ error: 'File name is too long (maximum is 255 characters)' });
    // The Service commits through a hook that refuses a read-only repository, and SnippetRepository
    // turns any refused commit into a CommitError: the model error `repository: "Error … the
    // snippet"` without detail (Snippets::BaseService#repository_error_message).
    case 'read_only':
    case 'repository': return validationFailed({ error: `Repository Error ${verb} the snippet` });
  }
}

/**
 * The level a snippet gets (default_snippet_visibility when none is named), or the Service's
 * 403 `{"message":{"error":"Visibility level … has been restricted …"}}` (Snippets::BaseService
 * forbidden_visibility_error) for a level the administrator restricted.
 */
export async function allowedVisibility(
db: Kysely<DB>, user: UserRow, visibility: Visibility | undefined, creating: boolean): Promise<number | undefined> {
  if (!visibility && !creating) return undefined;
  const settings = await currentSettings(db);
  const level = visibility ? visibilityLevel(visibility) : defaultVisibilityLevel(settings, 'snippet');
  const restricted = restrictedVisibilityError(settings, user, level);
  if (restricted) throw new ApiError(403, { message: { error: `Visibility level ${restricted}` } });
  return level;
}

