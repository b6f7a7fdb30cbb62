/**
 * Refs read in process (src/domain/repositories/ref-files.ts) against `git rev-parse` on the same
 * repository: loose refs and packed ones alike, a branch with a slash, annotated and lightweight
 * tags, a loose ref that shadows a stale packed line; what it leaves to git (a symbolic ref, a
 * reftable repository, a name that is not a ref) answers `undefined`, and refTarget then asks git.
 * And the bounds of the cache those reads key (repository-cache.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readRef } from '../../src/domain/repositories/ref-files.ts';
import { refTarget } from '../../src/domain/repositories/git-read.ts';
import { BoundedLru, remembered, cacheKey } from '../../src/domain/repositories/repository-cache.ts';

const ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' };

describe('refs read from the ref files', () => {
  let dir: string;
  let gitDir: string;
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { env: ENV, encoding: 'utf8', input: '' }).trim();
  const revParse = (ref: string) => {
    try {
      return git('rev-parse', '--verify', '--quiet', ref);
    } catch {
      return null;
    }
  };
  const commit = (message: string, parent?: string) => {
    const tree = git('mktree');
    return execFileSync('git', ['--git-dir', gitDir, 'commit-tree', tree, '-m', message, ...(parent ? ['-p', parent] : [])], { env: ENV, encoding: 'utf8' }).trim();
  };
  const REFS = ['refs/heads/main', 'refs/heads/feature/one', 'refs/heads/feature/two/deep', 'refs/heads/ü-ñicode', 'refs/tags/v1', 'refs/tags/light'];

  let first: string;
  let second: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-ref-files-'));
    gitDir = path.join(dir, 'repo.git');
    execFileSync('git', ['init', '--bare', '--quiet', '--initial-branch=main', gitDir], { env: ENV });
    first = commit('first');
    second = commit('second', first);
    git('update-ref', 'refs/heads/main', second);
    git('update-ref', 'refs/heads/feature/one', first);
    git('update-ref', 'refs/heads/feature/two/deep', second);
    git('update-ref', 'refs/heads/ü-ñicode', first);
    git('tag', '-a', '-m', 'annotated', 'v1', first);
    git('tag', 'light', second);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads loose refs as git does: branches with and without slashes, an annotated tag as its tag object, HEAD', async () => {
    for (const ref of REFS) assert.ok(fs.existsSync(path.join(gitDir, ref)), `${ref} is loose`);
    for (const ref of REFS) assert.equal(await readRef(gitDir, ref), revParse(ref), ref);
    const tagObject = await readRef(gitDir, 'refs/tags/v1');
    assert.notEqual(tagObject, first, 'an annotated tag names its tag object');
    assert.equal(git('cat-file', '-t', tagObject!), 'tag');
    assert.equal(await readRef(gitDir, 'HEAD'), second, 'HEAD follows its symbolic ref to main');
  });

  it('reads packed refs alike, and a loose ref over its stale packed line', async () => {
    git('pack-refs', '--all');
    for (const ref of REFS) assert.ok(!fs.existsSync(path.join(gitDir, ref)), `${ref} is packed only`);
    assert.match(fs.readFileSync(path.join(gitDir, 'packed-refs'), 'utf8'), /^\^[0-9a-f]{40}$/m, 'the annotated tag has a peeled line');
    for (const ref of REFS) assert.equal(await readRef(gitDir, ref), revParse(ref), ref);
    assert.equal(await readRef(gitDir, 'HEAD'), second);

    // A push writes a loose ref and leaves the packed line as it was: the loose one counts.
    const third = commit('third', second);
    git('update-ref', 'refs/heads/feature/one', third);
    assert.ok(fs.existsSync(path.join(gitDir, 'refs/heads/feature/one')));
    assert.equal(await readRef(gitDir, 'refs/heads/feature/one'), third);
    // Deleting a packed ref rewrites packed-refs: the kept parse of the old file is not used.
    git('update-ref', '-d', 'refs/heads/feature/two/deep');
    assert.equal(await readRef(gitDir, 'refs/heads/feature/two/deep'), null);
    assert.equal(await readRef(gitDir, 'refs/tags/light'), second);
  });

  it('answers null for a ref that does not exist, also where a directory or a file stands in its path', async () => {
    assert.equal(await readRef(gitDir, 'refs/heads/nothing'), null);
    assert.equal(await readRef(gitDir, 'refs/heads/feature'), null, 'refs/heads/feature is a directory');
    assert.equal(await readRef(gitDir, 'refs/heads/feature/one/below'), null, 'refs/heads/feature/one is a file');
    assert.equal(await refTarget(gitDir, 'refs/heads/nothing'), null);
    assert.equal(await readRef(path.join(dir, 'no-such-repo.git'), 'refs/heads/main'), null);
  });

  it('leaves to git what it does not read itself, and refTarget answers as git', async () => {
    git('symbolic-ref', 'refs/heads/alias', 'refs/heads/main');
    assert.equal(await readRef(gitDir, 'refs/heads/alias'), undefined, 'a symbolic ref beyond HEAD');
    assert.equal(await refTarget(gitDir, 'refs/heads/alias'), second);
    for (const name of ['refs/heads/../packed-refs', 'refs/heads/.hidden', 'refs//heads/main', 'config', '../repo.git/HEAD', 'refs/heads/a\nb']) {
      assert.equal(await readRef(gitDir, name), undefined, JSON.stringify(name));
    }
    // A repository in the reftable format keeps no loose or packed refs to read.
    const reftable = path.join(dir, 'reftable.git');
    fs.cpSync(gitDir, reftable, { recursive: true });
    fs.rmSync(path.join(reftable, 'refs/heads/feature/one'));
    fs.mkdirSync(path.join(reftable, 'reftable'));
    assert.equal(await readRef(reftable, 'refs/heads/feature/one'), undefined);
    // A loose file git would not write (an id of another length) is git's to read.
    fs.writeFileSync(path.join(gitDir, 'refs/heads/odd'), `${'a'.repeat(64)}\n`);
    assert.equal(await readRef(gitDir, 'refs/heads/odd'), undefined);
    fs.rmSync(path.join(gitDir, 'refs/heads/odd'));
  });
});

describe('the repository cache', () => {
  it('forgets the least recently used entries past its entry and byte bounds, and keeps no entry too large', () => {
    const lru = new BoundedLru(3, 10_000);
    lru.set('a', 1, 8);
    lru.set('b', 2, 8);
    lru.set('c', 3, 8);
    assert.equal(lru.get('a'), 1, 'a is now the most recently used');
    lru.set('d', 4, 8);
    assert.deepEqual(['a', 'b', 'c', 'd'].map((k) => lru.has(k)), [true, false, true, true]);

    const bytes = new BoundedLru(100, 1000);
    bytes.set('x', 'x', 400);
    bytes.set('y', 'y', 400);
    bytes.set('z', 'z', 400);
    assert.ok(!bytes.has('x') && bytes.has('y') && bytes.has('z'));
    assert.ok(bytes.bytes <= 1000);
    bytes.set('huge', 'h', 5000);
    assert.ok(!bytes.has('huge') && bytes.has('z'));
    bytes.set('null', null, 8);
    assert.equal(bytes.get('null'), null, 'null is an answer kept');
    assert.equal(bytes.get('absent'), undefined);
  });

  it('computes a missing answer once for concurrent callers, and keeps no failure', async () => {
    let runs = 0;
    const key = cacheKey('test', String(Date.now()), 'once');
    const compute = async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 10));
      return 'value';
    };
    assert.deepEqual(await Promise.all([remembered(key, compute), remembered(key, compute)]), ['value', 'value']);
    assert.equal(await remembered(key, compute), 'value');
    assert.equal(runs, 1);

    const failing = cacheKey('test', String(Date.now()), 'fails');
    await assert.rejects(remembered(failing, async () => { throw new Error('git failed'); }));
    assert.equal(await remembered(failing, async () => 'later'), 'later');
  });
});
