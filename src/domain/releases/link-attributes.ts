/**
 * What the Service's Releases::Link (15.2) validates: a name and a url, the url a valid address
 * of scheme http, https or ftp (AddressableUrlValidator), a direct asset path of the form
 * `/dir/file` (FILEPATH_REGEX, at most 128 characters) and a link type of the enum. The answer is
 * the model's error messages by attribute, as `render_api_error!(link.errors.messages)` sends them.
 */
export const LINK_TYPES = ['other', 'runbook', 'image', 'package'] as const;
export type LinkType = (typeof LINK_TYPES)[number];

const FILEPATH = /^\/(?:[-.\w]+\/?)*[\da-zA-Z]+$/;
const FILEPATH_MAX = 128;
const SCHEMES = ['http:', 'https:', 'ftp:'];

export interface LinkAttributes {
  name: string;
  url: string;
  filepath: string | null;
  link_type: LinkType;
}

export function linkErrors(a: LinkAttributes): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (!a.name.trim()) add('name', "can't be blank");
  if (!a.url.trim()) add('url', "can't be blank");
  else {
    let parsed: URL | null = null;
    try { parsed = new URL(a.url); } catch { parsed = null; }
    if (!parsed || !parsed.host || /\s/.test(a.url)) add('url', 'must be a valid URL');
    else if (!SCHEMES.includes(parsed.protocol)) add('url', 'is blocked: Only allowed schemes are http, https, ftp');
  }
  if (a.filepath) {
    if (a.filepath.length > FILEPATH_MAX) add('filepath', `is too long (maximum is ${FILEPATH_MAX} characters)`);
    else if (!FILEPATH.test(a.filepath)) add('filepath', 'is in an invalid format');
  }
  return errors;
}

/** The Rails full messages of `errors` ("Url must be a valid URL"), for a release's own validation message. */
export function fullMessages(prefix: string, errors: Record<string, string[]>): string[] {
  return Object.entries(errors).flatMap(([field, msgs]) => msgs.map((m) => `${prefix}${field} ${m}`));
}
