/**
 * The Service's `file_path: true` parameter validator (lib/api/validations/validators/
 * file_path.rb over Gitlab::Utils.check_path_traversal! and check_allowed_absolute_path!): a
 * path that is `.` or `..`, starts or ends with a `..` component, holds one in the middle or a
 * line break, as sent or once URL-decoded, or is absolute, answers 400
 * `<param> should be a valid file path`.
 */
const TRAVERSAL = /(^\.{1,2}$|^\.\.[/\\]|[/\\]\.\.$|[/\\]\.\.[/\\]|\n)/;

function decoded(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

export function validFilePathParam(path: string): boolean {
  return !TRAVERSAL.test(path) && !TRAVERSAL.test(decoded(path)) && !path.startsWith('/');
}

export const INVALID_FILE_PATH = 'should be a valid file path';
