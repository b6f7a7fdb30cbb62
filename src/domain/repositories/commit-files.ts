/**
 * The files of a commit being built from API actions (commit-actions.ts), and the checks each
 * action makes against them, with the Service's messages.
 */

/** A refused action: its message is the answer's. */
export class ActionError extends Error {}
export const fail = (message: string): never => { throw new ActionError(message); };

interface Entry {
  mode: string;
  id: string;
}

/**
 * The files of the commit being built, with a count of files below each directory so that
 * "is this a directory" costs one lookup, whatever the size of the tree.
 */
export class Files {
  readonly #files: Map<string, Entry>;
  readonly #dirs = new Map<string, number>();

  constructor(files: Map<string, Entry>) {
    this.#files = files;
    for (const p of files.keys()) this.#count(p, 1);
  }

  #count(p: string, delta: number): void {
    for (let at = p.indexOf('/'); at !== -1; at = p.indexOf('/', at + 1)) {
      const dir = p.slice(0, at);
      const n = (this.#dirs.get(dir) ?? 0) + delta;
      if (n === 0) this.#dirs.delete(dir);
      else this.#dirs.set(dir, n);
    }
  }

  get(p: string): Entry | undefined {
    return this.#files.get(p);
  }

  set(p: string, e: Entry): void {
    if (!this.#files.has(p)) this.#count(p, 1);
    this.#files.set(p, e);
  }

  delete(p: string): void {
    if (this.#files.delete(p)) this.#count(p, -1);
  }

  isDirectory(p: string): boolean {
    return this.#dirs.has(p);
  }

  /** Whether a file sits where a directory of `p` would have to be. */
  parentIsFile(p: string): boolean {
    for (let at = p.indexOf('/'); at !== -1; at = p.indexOf('/', at + 1)) if (this.#files.has(p.slice(0, at))) return true;
    return false;
  }
}

/** Submodules (gitlinks) name a commit, not content: they are not files to write or chmod. */
const GITLINK_MODE = '160000';

export function mustNotExist(files: Files, p: string): void {
  if (files.get(p) || files.parentIsFile(p)) fail('A file with this name already exists');
  if (files.isDirectory(p)) fail('A directory with this name already exists');
}

export function mustExist(files: Files, p: string): Entry {
  const entry = files.get(p);
  if (!entry) fail("A file with this name doesn't exist");
  return entry!;
}

export function mustBeFile(files: Files, p: string): Entry {
  const entry = mustExist(files, p);
  if (entry.mode === GITLINK_MODE) fail("A file with this name doesn't exist");
  return entry;
}
