/**
 * Wiki pages as the Service 15.2 keeps them (app/models/wiki.rb, app/models/wiki_page.rb, the
 * WikiPages services): each page is one file of the wiki repository's default branch, named by
 * its slug plus the extension of its format (`.md`, `.rdoc`, `.asciidoc`, `.org`; the other
 * extensions of each format are read too). The slug is the title made a path (Wiki#sluggified_title:
 * `.`/`..` resolved, spaces → `-`), so `a/b c` is the page `a/b-c.md` in the directory `a`; a page's
 * title is its file name without the extension, `-` shown as a space (Wiki#canonicalize_filename).
 * Lookups by slug ignore case, as the Service's find_matched_file does.
 *
 * Writes are real commits made with plumbing (repositories/commit-actions.ts writeCommit), with
 * the Service's default messages ("<username> created page: <title>"), published with
 * `updateRefs` on the project's row.
 */
import path from 'node:path/posix';
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { writeCommit, type CommitAction, type Identity } from '../repositories/commit-actions.ts';
import { flatTree, readBlob, resolveCommit } from '../repositories/git-read.ts';
import { updateRefs, type ProjectRepository } from '../repositories/project-repository.ts';
import { validRefName } from '../repositories/ref-names.ts';
import { wikiBranch } from './wiki-repository.ts';

/** The formats a page may be written in (the API's `format` values, Wiki::MARKUPS). */
export const WIKI_FORMATS = ['markdown', 'rdoc', 'asciidoc', 'org'] as const;
export type WikiFormat = (typeof WIKI_FORMATS)[number];

const DEFAULT_EXTENSIONS: Record<WikiFormat, string> = { markdown: 'md', rdoc: 'rdoc', asciidoc: 'asciidoc', org: 'org' };

/** Every extension that makes a file a page, and its format (Wiki::MARKUPS extension_regex). */
const EXTENSION_FORMATS: Record<string, WikiFormat> = {
  md: 'markdown', markdown: 'markdown', rdoc: 'rdoc', adoc: 'asciidoc', asciidoc: 'asciidoc', org: 'org',
};

/** Gitlab::WikiPages::MAX_TITLE_BYTES and MAX_DIRECTORY_BYTES. */
export const MAX_TITLE_BYTES = 245;
export const MAX_DIRECTORY_BYTES = 255;

/** Pages read at most this large (the instance's wiki_page_max_content_bytes bounds what is written). */
const MAX_READ_BYTES = 64 * 1024 * 1024;

export interface WikiPage {
  slug: string;
  title: string;
  format: WikiFormat;
  /** The file in the repository. */
  path: string;
  blobId: string;
  /** The raw content, when it was loaded. */
  content?: Buffer;
}

/** `a/b.md` → its page, or null for a file that is no page. */
export function pageOf(filePath: string, blobId: string): WikiPage | null {
  const ext = path.extname(filePath);
  const format = EXTENSION_FORMATS[ext.slice(1).toLowerCase()];
  const base = path.basename(filePath, ext);
  if (!format || base === '') return null;
  return { slug: filePath.slice(0, -ext.length), title: base.replace(/-/g, ' '), format, path: filePath, blobId };
}

/**
 * Wiki#sluggified_title: the title as a path below the wiki's root (`..` cannot climb out, `.`
 * and repeated slashes go), spaces made `-`.
 */
export function sluggify(title: string): string {
  return path.resolve('/', title).slice(1).replace(/ /g, '-');
}

/** WikiPage#deep_title_squish: each directory and the name squished (ends trimmed, inner runs of whitespace one space). */
function squishTitle(title: string): string {
  return title.split('/').map((part) => part.replace(/\s+/g, ' ').trim()).join('/');
}

async function pagesAt(gitDir: string, commit: string): Promise<WikiPage[]> {
  const tree = await flatTree(gitDir, commit);
  const pages: WikiPage[] = [];
  for (const [file, entry] of tree) {
    if (entry.mode !== '100644' && entry.mode !== '100755') continue;
    const page = pageOf(file, entry.id);
    if (page) pages.push(page);
  }
  return pages.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function tip(gitDir: string): Promise<{ branch: string; commit: string | null }> {
  const branch = await wikiBranch(gitDir);
  return { branch, commit: await resolveCommit(gitDir, `refs/heads/${branch}`) };
}

/** Wiki#list_pages: every page of the default branch, by path; with their contents when asked. */
export async function listPages(gitDir: string, withContent: boolean): Promise<WikiPage[]> {
  const { commit } = await tip(gitDir);
  if (!commit) return [];
  const pages = await pagesAt(gitDir, commit);
  if (withContent) for (const p of pages) p.content = await readBlob(gitDir, p.blobId, MAX_READ_BYTES);
  return pages;
}

function matching(pages: WikiPage[], slug: string): WikiPage | undefined {
  const wanted = sluggify(slug);
  return pages.find((p) => p.slug === wanted) ?? pages.find((p) => p.slug.toLowerCase() === wanted.toLowerCase());
}

/**
 * Wiki#find_page: the page `slug` names on the default branch, or at `version` (a commit id);
 * null when there is none (an unknown version included).
 */
export async function findPage(gitDir: string, slug: string, version?: string): Promise<(WikiPage & { commit: string }) | null> {
  let commit: string | null;
  if (version !== undefined && version !== '') {
    if (!/^[0-9a-f]{4,40}$/i.test(version)) return null;
    commit = await resolveCommit(gitDir, version);
  } else {
    commit = (await tip(gitDir)).commit;
  }
  if (!commit) return null;
  const page = matching(await pagesAt(gitDir, commit), slug);
  if (!page) return null;
  return { ...page, content: await readBlob(gitDir, page.blobId, MAX_READ_BYTES), commit };
}

export type WikiWriteResult =
  | { ok: true; page: WikiPage & { commit: string } }
  | { ok: false; reason: 'invalid'; errors: Record<string, string[]> }
  | { ok: false; reason: 'read_only' };

export interface WikiAuthor extends Identity {
  username: string;
}

/** number_to_human_size as the Service prints the content limit ("50 MB"). */
function humanSize(bytes: number): string {
  const units = ['Bytes', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${bytes} ${bytes === 1 ? 'Byte' : 'Bytes'}`;
  return `${Number(value.toPrecision(3))} ${units[unit]}`;
}

/** WikiPage's validations: title present and within the path limits, content present and within the instance's limit. */
function validate(title: string, content: string | undefined, maxContentBytes: number): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (title.trim() === '') add('title', "can't be blank");
  // A title that names the wiki's root (`.`, `..`, `/`) makes no file name.
  else if (sluggify(title) === '') add('title', 'is invalid');
  else {
    const parts = title.split('/');
    const name = parts.pop()!;
    if (Buffer.byteLength(name) > MAX_TITLE_BYTES) add('title', `exceeds the limit of ${MAX_TITLE_BYTES} bytes`);
    for (const dir of parts) {
      if (Buffer.byteLength(dir) > MAX_DIRECTORY_BYTES) add('title', `exceeds the limit of ${MAX_DIRECTORY_BYTES} bytes for directory name "${dir}"`);
    }
  }
  if (content !== undefined) {
    if (content.trim() === '') add('content', "can't be blank");
    const size = Buffer.byteLength(content);
    if (size > maxContentBytes) add('content', `is too long (${humanSize(size)}). The maximum size is ${humanSize(maxContentBytes)}.`);
  }
  return errors;
}

/** Writes one commit of `actions` on the wiki's branch and publishes it; then reads the page at `slug` back. */
async function commitAndRead(
  db: Kysely<DB>, repo: ProjectRepository, author: WikiAuthor, message: string, actions: CommitAction[], slug: string | null,
): Promise<WikiWriteResult> {
  const { branch } = await tip(repo.gitDir);
  const written = await writeCommit(repo.gitDir, { branch, force: false, message, author, committer: author, actions });
  if (!written.ok) return { ok: false, reason: 'invalid', errors: { base: [written.message] } };
  const r = await updateRefs(db, repo, [written.update]);
  if (!r.ok) {
    if (r.reason === 'stale') {
      return { ok: false, reason: 'invalid', errors: { base: ['The wiki was changed by someone else. Please try again.'] } };
    }
    return { ok: false, reason: 'read_only' };
  }
  if (slug === null) return { ok: true, page: { slug: '', title: '', format: 'markdown', path: '', blobId: '', commit: written.commitId } };
  const page = await findPage(repo.gitDir, slug, written.commitId);
  if (!page) throw new Error(`the wiki page ${slug} is missing from the commit that wrote it`);
  return { ok: true, page };
}

/** WikiPages::CreateService. */
export async function createPage(db: Kysely<DB>, repo: ProjectRepository, o: {
  title: string; content: string; format: WikiFormat; author: WikiAuthor; maxContentBytes: number;
}): Promise<WikiWriteResult> {
  const title = squishTitle(o.title);
  const errors = validate(title, o.content, o.maxContentBytes);
  if (Object.keys(errors).length > 0) return { ok: false, reason: 'invalid', errors };
  const slug = sluggify(title);
  const { commit } = await tip(repo.gitDir);
  if (commit && matching(await pagesAt(repo.gitDir, commit), slug)) {
    return { ok: false, reason: 'invalid', errors: { base: ['Duplicate page: A page with that title at that path already exists'] } };
  }
  const filePath = `${slug}.${DEFAULT_EXTENSIONS[o.format]}`;
  return commitAndRead(db, repo, o.author, `${o.author.username} created page: ${title}`, [
    { action: 'create', filePath, content: Buffer.from(o.content) },
  ], slug);
}

/**
 * WikiPages::UpdateService: a new title without a directory keeps the page's directory, one
 * starting with `/` moves it to the root (WikiPage#process_title); the page's file keeps its
 * extension unless the format changes.
 */
export async function updatePage(db: Kysely<DB>, repo: ProjectRepository, page: WikiPage, o: {
  title?: string; content?: string; format: WikiFormat; author: WikiAuthor; maxContentBytes: number;
}): Promise<WikiWriteResult> {
  let title = page.slug;
  if (o.title !== undefined && o.title.trim() !== '') {
    const squished = squishTitle(o.title);
    const dir = path.dirname(page.slug);
    if (squished.startsWith('/')) title = squished.slice(1);
    else if (!squished.includes('/') && dir !== '.') title = `${dir}/${squished}`;
    else title = squished;
  }
  const content = o.content ?? page.content?.toString('utf8') ?? '';
  const errors = validate(title, o.content, o.maxContentBytes);
  if (Object.keys(errors).length > 0) return { ok: false, reason: 'invalid', errors };
  const slug = sluggify(title);
  if (slug.toLowerCase() !== page.slug.toLowerCase()) {
    const { commit } = await tip(repo.gitDir);
    if (commit && matching(await pagesAt(repo.gitDir, commit), slug)) {
      return { ok: false, reason: 'invalid', errors: { base: ['There is already a page with the same title in that path.'] } };
    }
  }
  const extension = o.format === page.format ? path.extname(page.path).slice(1).toLowerCase() : DEFAULT_EXTENSIONS[o.format];
  const filePath = `${slug}.${extension}`;
  const action: CommitAction = filePath === page.path
    ? { action: 'update', filePath, content: Buffer.from(content) }
    : { action: 'move', filePath, previousPath: page.path, content: Buffer.from(content) };
  return commitAndRead(db, repo, o.author, `${o.author.username} updated page: ${title}`, [action], slug);
}

/** WikiPages::DestroyService. */
export async function deletePage(db: Kysely<DB>, repo: ProjectRepository, page: WikiPage, author: WikiAuthor): Promise<WikiWriteResult> {
  return commitAndRead(db, repo, author, `${author.username} deleted page: ${page.title}`, [
    { action: 'delete', filePath: page.path },
  ], null);
}

/** Wikis::CreateAttachmentService::MAX_FILENAME_LENGTH. */
const MAX_ATTACHMENT_NAME = 255;

/** The attachment's file name as the service cleans it: at most 255 characters (extension kept), only word characters, `.` and `-`. */
export function cleanAttachmentName(raw: string): string {
  let name = raw;
  if (name.length > MAX_ATTACHMENT_NAME) {
    const ext = path.extname(name);
    name = path.basename(name, ext).slice(0, MAX_ATTACHMENT_NAME - ext.length) + ext;
  }
  return name.replace(/[^\p{L}\p{N}_.-]/gu, '');
}

export type AttachmentResult =
  | { ok: true; fileName: string; filePath: string; branch: string; commit: string }
  | { ok: false; reason: 'invalid'; message: string }
  | { ok: false; reason: 'read_only' };

/**
 * Wikis::CreateAttachmentService: the file committed at `uploads/<32 hex>/<name>` of `branch`
 * (the wiki's default branch unless given), "Upload attachment <name>".
 */
export async function createAttachment(db: Kysely<DB>, repo: ProjectRepository, o: {
  fileName: string; data: Buffer; branch?: string; author: Identity;
}): Promise<AttachmentResult> {
  const fileName = cleanAttachmentName(o.fileName);
  if (fileName === '' || /^\.+$/.test(fileName)) return { ok: false, reason: 'invalid', message: 'You must provide a file path' };
  const defaultBranch = await wikiBranch(repo.gitDir);
  const branch = o.branch ?? defaultBranch;
  if (!validRefName(branch)) return { ok: false, reason: 'invalid', message: `Branch name is invalid` };
  const filePath = `uploads/${crypto.randomBytes(16).toString('hex')}/${fileName}`;
  const startBranch = branch === defaultBranch ? undefined : defaultBranch;
  const exists = await resolveCommit(repo.gitDir, `refs/heads/${branch}`);
  const written = await writeCommit(repo.gitDir, {
    branch, ...(startBranch !== undefined && !exists ? { startBranch } : {}), force: false,
    message: `Upload attachment ${fileName}`, author: o.author, committer: o.author,
    actions: [{ action: 'create', filePath, content: o.data }],
  });
  if (!written.ok) return { ok: false, reason: 'invalid', message: written.message };
  const r = await updateRefs(db, repo, [written.update]);
  if (!r.ok) {
    if (r.reason === 'stale') {
      return { ok: false, reason: 'invalid', message: `Could not update refs/heads/${branch}. Please refresh and try again.` };
    }
    return { ok: false, reason: 'read_only' };
  }
  return { ok: true, fileName, filePath, branch, commit: written.commitId };
}
