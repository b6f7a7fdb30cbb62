/**
 * Reading a ref without starting git: the files a repository's refs live in (gitrepository-
 * layout(5), "refs" and "packed-refs"; git-pack-refs(1)). A loose file `<git dir>/<ref>` holding
 * an object id wins; without one, the line of `packed-refs` that names the ref. A page reads its
 * branch head this way on every request (the key of everything repository-cache.ts keeps), where
 * a git process would cost more CPU than the rest of the page (bench/web-pages.ts).
 *
 * Anything unusual answers `undefined`, and the caller asks git: a symbolic ref other than HEAD,
 * a repository whose refs are elsewhere (a linked worktree's `commondir`) or in another format
 * (`reftable`), object ids of another length (SHA-256), a packed-refs file too large to keep
 * parsed, a file that does not read as git writes it. Git writes both files by renaming a
 * finished lock file over them, so a read sees the whole old file or the whole new one.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { isValidRefName } from './ref-name.ts';
import { cacheKey, repositoryCache } from './repository-cache.ts';

const OBJECT_ID = /^([0-9a-f]{40})\n?$/;
const SYMBOLIC = /^ref: (refs\/[^\n]+)\n?$/;
/** A packed-refs file up to this size is parsed once per version and kept (by inode, size and time). */
const MAX_PACKED_REFS_BYTES = 2 * 1024 * 1024;
/** Most bytes of a loose ref file read: an id and a line break, or `ref: ` and a name. */
const MAX_LOOSE_BYTES = 4096;

interface PackedRefs {
  /** inode, size and modification time of the file parsed. */
  stamp: string;
  refs: Map<string, string>;
}

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}

async function readSmall(file: string): Promise<string | null> {
  const handle = await fs.open(file, 'r');
  try {
    const buffer = Buffer.alloc(MAX_LOOSE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, MAX_LOOSE_BYTES, 0);
    return bytesRead === MAX_LOOSE_BYTES ? null : buffer.toString('latin1', 0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** `packed-refs` as ref → object id; null when a line is not one git writes for SHA-1 ids. */
function parsePackedRefs(text: string): Map<string, string> | null {
  const refs = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    // The peeled value of the annotated tag on the line before (the ref names the tag object).
    if (line.startsWith('^')) {
      if (!/^\^[0-9a-f]{40}$/.test(line)) return null;
      continue;
    }
    const m = /^([0-9a-f]{40}) (refs\/.+)$/.exec(line);
    if (!m) return null;
    refs.set(m[2]!, m[1]!);
  }
  return refs;
}

async function packedRef(gitDir: string, fullRef: string): Promise<string | null | undefined> {
  if (await exists(path.join(gitDir, 'reftable')) || await exists(path.join(gitDir, 'commondir'))) return undefined;
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(path.join(gitDir, 'packed-refs'), 'r');
  } catch (err) {
    return errorCode(err) === 'ENOENT' ? null : undefined;
  }
  try {
    // The stamp of the file this handle has open, so the text read below is the one it names.
    const st = await handle.stat({ bigint: true });
    if (st.size > BigInt(MAX_PACKED_REFS_BYTES)) return undefined;
    const stamp = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    const key = cacheKey('packed-refs', gitDir);
    let packed = repositoryCache.get<PackedRefs>(key);
    if (!packed || packed.stamp !== stamp) {
      // Ref names are UTF-8 on disk, as kiln hands them to git.
      const refs = parsePackedRefs((await handle.readFile()).toString('utf8'));
      if (!refs) return undefined;
      packed = { stamp, refs };
      repositoryCache.set(key, packed, Number(st.size) * 3);
    }
    return packed.refs.get(fullRef) ?? null;
  } finally {
    await handle.close();
  }
}

/**
 * The object id the ref `fullRef` (`refs/heads/main`, `refs/tags/v1`, or `HEAD`) names as git
 * would read it (for an annotated tag, the tag object), null when there is no such ref, or
 * undefined when git must answer (see above).
 */
export async function readRef(gitDir: string, fullRef: string): Promise<string | null | undefined> {
  // The name becomes a path below the git directory: only a name git accepts (no `..`, no
  // component starting with a dot, no doubled slash) is looked up.
  if (fullRef !== 'HEAD' && (!fullRef.startsWith('refs/') || !isValidRefName(fullRef))) return undefined;
  let text: string | null;
  try {
    text = await readSmall(path.join(gitDir, fullRef));
  } catch (err) {
    const code = errorCode(err);
    // No loose file: the ref is packed or does not exist. A directory (refs/heads/a when only
    // refs/heads/a/b exists) or a file where a directory would be (ENOTDIR) holds no such ref.
    if (fullRef !== 'HEAD' && (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR')) return packedRef(gitDir, fullRef);
    return undefined;
  }
  if (text === null) return undefined;
  const id = OBJECT_ID.exec(text);
  if (id) return id[1]!;
  // HEAD names the default branch; a symbolic ref anywhere else is left to git.
  const target = fullRef === 'HEAD' ? SYMBOLIC.exec(text) : null;
  return target ? readRef(gitDir, target[1]!) : undefined;
}
