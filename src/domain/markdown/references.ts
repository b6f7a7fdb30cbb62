/**
 * GitLab Flavored Markdown references (issue 29: "#1, !1, @user, ~label, %milestone linked when the
 * caller may see them"), as the Service's reference filters find them in text
 * (lib/banzai/filter/references/*_reference_filter.rb): `@username`, `#iid`, `~123` / `~name` /
 * `~"two words"`, `%123` / `%name` / `%"two words"`, `!iid` (merge requests, issue 30).
 *
 * The renderer only finds the references; a ReferenceResolver says which of them exist and are
 * visible to the viewer in the rendering context, and answers nothing for the others, whose text
 * then stays text (the Service's ReferenceRedactor leaves no trace of what the viewer may not see).
 *
 * Cross-project references (`group/project#1`, `group/project!1`) stay text.
 */

export interface UserReference {
  id: number;
  username: string;
  name: string;
  url: string;
}

export interface IssueReference {
  id: number;
  iid: number;
  title: string;
  url: string;
  projectId: number;
  projectPath: string;
  issueType: string;
}

export interface MergeRequestReference {
  id: number;
  iid: number;
  title: string;
  url: string;
  projectId: number;
  projectPath: string;
}

export interface LabelReference {
  id: number;
  title: string;
  /** `#rrggbb`. */
  color: string;
  description: string | null;
  url: string;
  projectId: number | null;
}

export interface MilestoneReference {
  id: number;
  iid: number;
  title: string;
  url: string;
  projectId: number | null;
}

/** `@all`: everyone with access to the context project. */
export interface AllMembersReference {
  url: string;
  projectId: number;
  /** The viewer, named in `data-author` as the Service does. */
  authorId: number | null;
}

/**
 * What the viewer may see of the references a text makes. Every method answers only the records
 * that exist and that the viewer may read; labels and milestones in order of precedence (the
 * context project's before its groups', nearer groups first), the first match of a name winning.
 */
export interface ReferenceResolver {
  /** Users by username (matched case-insensitively). */
  users(usernames: string[]): Promise<UserReference[]>;
  /** The context project's issues by iid. */
  issues(iids: number[]): Promise<IssueReference[]>;
  /** The context project's merge requests by iid. */
  mergeRequests(iids: number[]): Promise<MergeRequestReference[]>;
  labels(query: { ids: number[]; titles: string[] }): Promise<LabelReference[]>;
  /** `%123` names a milestone by iid. */
  milestones(query: { iids: number[]; titles: string[] }): Promise<MilestoneReference[]>;
  /** `@all`, or null when the context does not allow it. */
  allMembers(): Promise<AllMembersReference | null>;
}

export type FoundReference =
  | { kind: 'user'; username: string }
  | { kind: 'all' }
  | { kind: 'issue'; iid: number }
  | { kind: 'merge_request'; iid: number }
  | { kind: 'label'; id: number }
  | { kind: 'label'; title: string }
  | { kind: 'milestone'; iid: number }
  | { kind: 'milestone'; title: string };

export interface ReferenceMatch {
  /** Offset in the text and the text it covers (the `data-original` of the link). */
  index: number;
  original: string;
  ref: FoundReference;
}

// One pass over a text node: a user (path characters, not ending in a dot), an issue iid, a label
// (id, quoted name, or bare name not ending in `.` or `?`), a milestone (iid, quoted name, or bare
// name up to a word boundary). None may follow a word character (an email address, `a#1`).
const REFERENCE = new RegExp([
  String.raw`(?<![\w@/.])@(?<user>[a-zA-Z0-9_][a-zA-Z0-9_.-]*)`,
  String.raw`(?<![\w&])#(?<issue>\d+)(?![\w])`,
  String.raw`(?<![\w&])!(?<mergeRequest>\d+)(?![\w])`,
  String.raw`(?<!\w)~(?:(?<labelId>\d+)(?![\w.-])|"(?<labelQuoted>[^"\n]+)"|(?<labelName>[A-Za-z0-9_\-?.&]+))`,
  String.raw`(?<!\w)%(?:(?<milestoneIid>\d+)(?![\w.-])|"(?<milestoneQuoted>[^"\n]+)"|(?<milestoneName>[^"\s<]+))`,
].join('|'), 'g');

/** The largest iid or id a reference names: the integer columns' range. */
const MAX_ID = 2_147_483_647;
/** Titles and usernames are `varchar(255)`. */
const MAX_NAME = 255;

function build(m: RegExpMatchArray): { original: string; ref: FoundReference } | null {
  const g = m.groups ?? {};
  let original = m[0];
  if (g.user !== undefined) {
    const username = g.user.replace(/\.+$/, '');
    if (username === '' || username.length > MAX_NAME) return null;
    original = `@${username}`;
    return { original, ref: username === 'all' ? { kind: 'all' } : { kind: 'user', username } };
  }
  const id = (s: string) => { const n = Number(s); return n <= MAX_ID ? n : null; };
  if (g.issue !== undefined) {
    const iid = id(g.issue);
    return iid === null ? null : { original, ref: { kind: 'issue', iid } };
  }
  if (g.mergeRequest !== undefined) {
    const iid = id(g.mergeRequest);
    return iid === null ? null : { original, ref: { kind: 'merge_request', iid } };
  }
  if (g.labelId !== undefined) {
    const labelId = id(g.labelId);
    return labelId === null ? null : { original, ref: { kind: 'label', id: labelId } };
  }
  if (g.labelQuoted !== undefined) {
    return g.labelQuoted.length > MAX_NAME ? null : { original, ref: { kind: 'label', title: g.labelQuoted } };
  }
  if (g.labelName !== undefined) {
    const title = g.labelName.replace(/[.?]+$/, '');
    if (title === '' || title.length > MAX_NAME) return null;
    return { original: `~${title}`, ref: { kind: 'label', title } };
  }
  if (g.milestoneIid !== undefined) {
    const iid = id(g.milestoneIid);
    return iid === null ? null : { original, ref: { kind: 'milestone', iid } };
  }
  if (g.milestoneQuoted !== undefined) {
    return g.milestoneQuoted.length > MAX_NAME ? null : { original, ref: { kind: 'milestone', title: g.milestoneQuoted } };
  }
  const title = (g.milestoneName ?? '').replace(/\W+$/u, '');
  if (title === '' || title.length > MAX_NAME) return null;
  return { original: `%${title}`, ref: { kind: 'milestone', title } };
}

/** The references a piece of text makes, in order. */
export function findReferences(text: string): ReferenceMatch[] {
  const out: ReferenceMatch[] = [];
  if (!/[@#~%!]/.test(text)) return out;
  for (const m of text.matchAll(REFERENCE)) {
    const found = build(m);
    if (found) out.push({ index: m.index, ...found });
  }
  return out;
}
