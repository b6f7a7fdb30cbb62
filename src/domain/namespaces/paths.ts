/**
 * Path rules of the Service (lib/gitlab/path_regex.rb, app/validators/abstract_path_validator.rb):
 * the character format of namespace and project paths, and the words that may not be used
 * because routes of the same name would mask them.
 */
import crypto from 'node:crypto';

/** Top-level routes: a root namespace (username or group) may not take these names. */
export const TOP_LEVEL_ROUTES: ReadonlySet<string> = new Set([
  '-', '.well-known', '404.html', '422.html', '500.html', '502.html', '503.html', 'abuse_reports', 'admin', 'api',
  'apple-touch-icon-precomposed.png', 'apple-touch-icon.png', 'assets', 'autocomplete', 'ci', 'dashboard', 'deploy.html',
  'explore', 'favicon.ico', 'files', 'groups', 'header_logo_dark.png', 'header_logo_light.png', 'health_check', 'help',
  'import', 'invites', 'jwt', 'koding', 'notification_settings', 'oauth', 'profile', 'projects', 'public', 'robots.txt',
  's', 'search', 'sent_notifications', 'slash-command-logo.png', 'snippets', 'u', 'unsubscribes', 'uploads', 'users',
]);

/** Words after `/<namespace>/<project>/` in wildcard routes: no project or sub-group may take them. */
export const PROJECT_WILDCARD_ROUTES: ReadonlySet<string> = new Set([
  '-', 'badges', 'blame', 'blob', 'builds', 'commits', 'create', 'create_dir', 'edit', 'files', 'find_file', 'new',
  'preview', 'raw', 'refs', 'tree', 'update', 'wikis',
]);

const NAMESPACE_FORMAT = /^(?:[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*[a-zA-Z0-9_-]|[a-zA-Z0-9_])$/;
const PROJECT_PATH_FORMAT = /^[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*$/;
const FORBIDDEN_SUFFIX = /\.(git|atom)$/i;

export const NAMESPACE_FORMAT_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in "
  + "'.', '.git' or '.atom'.";
export const PROJECT_PATH_FORMAT_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in "
  + "'.git' or end in '.atom'";
export const PROJECT_NAME_FORMAT_MESSAGE = "can contain only letters, digits, emojis, '_', '.', '+', dashes, or spaces. It must "
  + "start with a letter, digit, emoji, or '_'.";

/** A group path's problem, or null. Root groups share the top level with usernames and routes. */
export function namespacePathError(path: string, isRoot: boolean): string | null {
  if (!NAMESPACE_FORMAT.test(path) || FORBIDDEN_SUFFIX.test(path)) return NAMESPACE_FORMAT_MESSAGE;
  const word = path.toLowerCase();
  if (isRoot ? TOP_LEVEL_ROUTES.has(word) : PROJECT_WILDCARD_ROUTES.has(word)) return `${path} is a reserved name`;
  return null;
}

export function projectPathError(path: string): string | null {
  // `.` and `..` match the character format but name the namespace's directory or its parent.
  if (!PROJECT_PATH_FORMAT.test(path) || FORBIDDEN_SUFFIX.test(path) || path === '.' || path === '..') return PROJECT_PATH_FORMAT_MESSAGE;
  if (PROJECT_WILDCARD_ROUTES.has(path.toLowerCase())) return `${path} is a reserved name`;
  return null;
}

/** Gitlab::Regex.project_name_regex: letters, digits, emoji, '_', '.', '+', '-', spaces; not starting with a symbol. */
export function projectNameError(name: string): string | null {
  return /^[\p{L}\p{N}\p{Extended_Pictographic}_][\p{L}\p{N}\p{Extended_Pictographic}\p{M}_.+\- ]*$/u.test(name) ? null : PROJECT_NAME_FORMAT_MESSAGE;
}

/** Group names: Gitlab::Regex.group_name_regex (letters, digits, emoji, '_', '.', '(', ')', '-', spaces). */
export function groupNameError(name: string): string | null {
  return /^[\p{L}\p{N}\p{Extended_Pictographic}_.()\- ]+$/u.test(name) && /^[\p{L}\p{N}\p{Extended_Pictographic}_(]/u.test(name)
    ? null
    : "can contain only letters, digits, emojis, '_', '.', dash, space, parenthesis. It must start with letter, digit, emoji or '_'.";
}

/** The path the Service derives from a name when only a name is given (`name.parameterize`-like). */
export function pathFromName(name: string): string {
  return name.trim().toLowerCase().replace(/[^a-z0-9_.]+/g, '-').replace(/^-+|-+$/g, '').replace(/\.(git|atom)$/, '') || 'project';
}

/** The longest directory entry the file systems kiln stores repositories on accept (NAME_MAX). */
const NAME_MAX_BYTES = 255;

/**
 * `name` + `suffix` as one directory entry on disk. A path of 255 characters is valid (the
 * Service's limit) but with `.git` or `.wiki.git` after it passes NAME_MAX (ENAMETOOLONG): such a
 * name is cut short and tagged at random instead, the way a taken directory name is.
 */
export function diskEntry(name: string, suffix: string): string {
  if (Buffer.byteLength(name + suffix) <= NAME_MAX_BYTES) return name + suffix;
  return `${name.slice(0, NAME_MAX_BYTES - suffix.length - 9)}-${crypto.randomBytes(4).toString('hex')}${suffix}`;
}
