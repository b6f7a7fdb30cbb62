/**
 * kiln's branch and tag name rules (src/domain/repositories/ref-names.ts) against git's own
 * `git check-ref-format` on a corpus of names: where git refuses, kiln refuses; where kiln
 * refuses a name git accepts, it is one of the Service's own refusals. File paths are normalised
 * as the Service's index does.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { validRefName } from '../../src/domain/repositories/ref-names.ts';
import { normaliseFilePath } from '../../src/domain/repositories/file-paths.ts';

const CORPUS = [
  'main', 'feature/one', 'release/1.0', 'a-b_c.d', 'v1.2.3', 'ü-ñicode', 'x@y', 'a/b/c/d',
  'a..b', 'a b', 'a~b', 'a^b', 'a:b', 'a?b', 'a*b', 'a[b', 'a\\b', '.hidden', 'a/.b', 'x.lock', 'a/b.lock/c',
  'a/', '/a', 'a//b', 'a.', 'a@{1}', '@', 'a\u0001b', 'a\u007fb', 'tab\there',
  'HEAD', '-dash', 'refs/heads/main', 'refs/remotes/x', 'refs/tags/v1',
];
/**
 * Refused although git accepts them: the Service's own refusals (Gitlab::GitRefValidator), and
 * `@`, which revision syntax reads as HEAD (kiln resolves refs by short name).
 */
const SERVICE_ONLY = new Set(['HEAD', '-dash', 'refs/heads/main', 'refs/remotes/x', 'refs/tags/v1', '@']);

function gitAccepts(name: string): boolean {
  return spawnSync('git', ['check-ref-format', `refs/heads/${name}`]).status === 0;
}

describe('ref names and file paths', () => {
  it('refuses every name git refuses, and accepts the rest but the Service\'s own refusals', () => {
    for (const name of CORPUS) {
      const git = gitAccepts(name);
      const kiln = validRefName(name);
      if (!git) assert.equal(kiln, false, `git refuses ${JSON.stringify(name)}`);
      else assert.equal(kiln, !SERVICE_ONLY.has(name), JSON.stringify(name));
    }
    assert.equal(validRefName('x'.repeat(256)), false, 'a component longer than a file name');
    assert.equal(validRefName(`${'x'.repeat(200)}/${'y'.repeat(200)}`), true);
    assert.equal(validRefName(`${'x/'.repeat(600)}x`), false, 'longer than MAX_REF_NAME');
  });

  it('normalises file paths and refuses traversal, control bytes and .git', () => {
    assert.deepEqual(normaliseFilePath('//a///b/c.txt/'), { ok: true, path: 'a/b/c.txt' });
    assert.deepEqual(normaliseFilePath('dir/file name.md'), { ok: true, path: 'dir/file name.md' });
    for (const bad of ['../x', 'a/../b', 'a/./b', '.', 'a\u0000b', 'a\nb', '.git/config', 'x/.GIT/y', '', '///', 'a'.repeat(4097), `${'b'.repeat(256)}/c`]) {
      assert.equal(normaliseFilePath(bad).ok, false, JSON.stringify(bad.slice(0, 40)));
    }
  });
});
