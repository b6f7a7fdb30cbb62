/**
 * The repository search's pieces on a scratch repository: the blob filters parsed out of the text,
 * git grep's output read field by field (paths with spaces, colons and line breaks), runs of lines
 * split where the context does not join them, and output bounded by truncation rather than failure.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseBlobQuery, searchBlobs, withNameMatchData } from '../../../src/domain/search/repository-search.ts';
import { runGitBytes } from '../../../src/domain/repositories/git-bytes.ts';

const ENV = {
  ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com',
};

describe('repository search', () => {
  let dir: string;
  let gitDir: string;
  let commit: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-search-'));
    const work = path.join(dir, 'work');
    execFileSync('git', ['init', '--quiet', '--initial-branch=main', work], { env: ENV });
    const lines = Array.from({ length: 12 }, (_, i) => (i === 3 || i === 10 ? `needle ${i + 1}` : `hay ${i + 1}`));
    fs.writeFileSync(path.join(work, 'two runs.txt'), `${lines.join('\n')}\n`);
    fs.writeFileSync(path.join(work, 'odd:name\nwith break.md'), 'a needle here\n');
    fs.writeFileSync(path.join(work, 'needle-named.txt'), 'first\nsecond\nthird\nfourth\nfifth\nsixth\n');
    execFileSync('git', ['add', '--all'], { cwd: work, env: ENV });
    execFileSync('git', ['commit', '--quiet', '-m', 'files'], { cwd: work, env: ENV });
    gitDir = path.join(work, '.git');
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: work, env: ENV, encoding: 'utf8' }).trim();
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('parses the filename:, path: and extension: filters out of the text', () => {
    const q = parseBlobQuery('needle  filename:*.txt path:src/ extension:RB');
    assert.equal(q.term, 'needle');
    assert.deepEqual(q.filters.map((f) => [f.kind, f.pattern.source, f.pattern.flags]), [
      ['filename', '.*\\.txt$', 'i'], ['path', 'src\\/', 'i'], ['extension', '\\.RB$', 'i'],
    ]);
    assert.deepEqual(parseBlobQuery('path:a').term, '');
  });

  it('reads each run of lines with its first line number, paths of any characters included', async () => {
    const found = await withNameMatchData(gitDir, await searchBlobs(gitDir, commit, parseBlobQuery('NEEDLE')));
    assert.deepEqual(found.map((b) => [b.path, b.startline, b.data]), [
      ['needle-named.txt', 1, 'first\nsecond\nthird\nfourth\nfifth\n'],
      ['odd:name\nwith break.md', 1, 'a needle here\n'],
      ['two runs.txt', 2, 'hay 2\nhay 3\nneedle 4\nhay 5\nhay 6\n'],
      ['two runs.txt', 9, 'hay 9\nhay 10\nneedle 11\nhay 12\n'],
    ]);
    assert.equal(found[1].basename, 'odd:name\nwith break');
  });

  it('answers what was read when output passes its bound, if asked to', async () => {
    const args = ['cat-file', 'blob', `${commit}:needle-named.txt`];
    const cut = await runGitBytes(args, { gitDir, maxBytes: 8, truncate: true });
    assert.equal(cut.stdout.toString(), 'first\nse');
    assert.equal(cut.truncated, true);
    await assert.rejects(runGitBytes(args, { gitDir, maxBytes: 8 }), /wrote more than 8 bytes/);
  });
});
