/**
 * Changelogs from commit trailers at the HTTP boundary (issue 30, item 4): GET renders the release
 * section, POST commits it into the changelog file (checked in the bare repository with git), with
 * the Service 15.2's defaults (previous release tag, categories, template, reverted commits left
 * out) and its 400 / 403 / 422 answers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, type CiProject } from '../helpers/ci.ts';
import { recordPush } from '../../src/domain/projects/projects.queries.ts';
import { inspectRepository } from '../../src/domain/repositories/repositories.ts';
import { addRelease, compareVersions, strftime } from '../../src/domain/repositories/changelog.ts';
import { parseTemplate, renderTemplate } from '../../src/domain/repositories/changelog-template.ts';

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const ADA = { GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.com', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.com' };

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  return execFileSync(cmd, args, { cwd, env: { ...ENV, ...env }, encoding: 'utf8' }).trim();
}

describe('changelog from commit trailers', () => {
  let t: TestApp;
  let p: CiProject;
  let work: string;
  let reporterToken: string;
  const sha: Record<string, string> = {};
  const url = () => `/api/v4/projects/${p.project.id}/repository/changelog`;
  const ref = (id: string) => `${p.fullPath}@${id}`;

  function commit(message: string, files: Record<string, string> = {}): string {
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(work, name)), { recursive: true });
      fs.writeFileSync(path.join(work, name), content);
    }
    run('git', ['add', '--all'], work);
    run('git', ['commit', '--quiet', '--allow-empty', '-m', message], work, ADA);
    return run('git', ['rev-parse', 'HEAD'], work);
  }
  async function push(...refs: string[]) {
    run('git', ['push', '--quiet', p.gitDir, ...refs], work);
    await recordPush(t.db, p.project.id, await inspectRepository(p.gitDir, null));
  }
  const git = (...args: string[]) => run('git', ['--git-dir', p.gitDir, ...args], os.tmpdir());

  before(async () => {
    t = await startTestApp();
    p = await createCiProject(t, { name: 'changes' });
    const reporter = await createUser(t.db);
    reporterToken = await createToken(t.db, reporter);
    const m = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: reporter.id, access_level: 20 } });
    assert.equal(m.statusCode, 201, m.body);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-changelog-'));
    run('git', ['init', '--quiet', '--initial-branch=main'], work);
    sha.c1 = commit('Initial', { 'README.md': '# Changes\n' });
    run('git', ['tag', 'v1.0.0'], work);
    run('git', ['tag', 'v1.1.0-rc1'], work);
    sha.c2 = commit('Add feature A\n\nChangelog: added');
    sha.c3 = commit('Fix bug B\n\nSome words.\n\nChangelog: fixed\nSigned-off-by: Ada <ada@example.com>');
    sha.c4 = commit('Add feature C\n\nChangelog: added');
    sha.c5 = commit(`Revert "Add feature C"\n\nThis reverts commit ${sha.c4}.`);
    sha.c6 = commit('Unrelated work');
    await push('main', 'v1.0.0', 'v1.1.0-rc1');
  });
  after(async () => {
    fs.rmSync(work, { recursive: true, force: true });
    await t.close();
  });

  const expected110 = () => `## 1.1.0 (2026-01-02)\n\n### fixed (1 change)\n\n- [Fix bug B](${ref(sha.c3)})\n\n`
    + `### added (1 change)\n\n- [Add feature A](${ref(sha.c2)})\n\n`;

  it('renders the release since the previous stable tag, leaving out reverted commits', async () => {
    const res = await t.request({ method: 'GET', url: `${url()}?version=1.1.0&date=2026-01-02T10:00:00Z`, token: p.ownerToken });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { notes: expected110() });
    const range = await t.request({ method: 'GET', url: `${url()}?version=1.1.0&from=${sha.c2}&to=${sha.c3}&date=2026-01-02`, token: reporterToken });
    assert.equal(range.json().notes, `## 1.1.0 (2026-01-02)\n\n### fixed (1 change)\n\n- [Fix bug B](${ref(sha.c3)})\n\n`);
    const none = await t.request({ method: 'GET', url: `${url()}?version=1.1.0&from=${sha.c5}&date=2026-01-02`, token: p.ownerToken });
    assert.equal(none.json().notes, '## 1.1.0 (2026-01-02)\n\nNo changes.\n\n');
    const trailer = await t.request({ method: 'GET', url: `${url()}?version=1.1.0&trailer=Signed-off-by&date=2026-01-02`, token: p.ownerToken });
    assert.match(trailer.json().notes, /### Ada <ada@example.com> \(1 change\)/);
  });

  it('refuses what the Service refuses', async () => {
    const bad = await t.request({ method: 'GET', url: `${url()}?version=one`, token: p.ownerToken });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { error: 'version is invalid' });
    const missing = await t.request({ method: 'GET', url: url(), token: p.ownerToken });
    assert.equal(missing.statusCode, 400);
    const noTag = await t.request({ method: 'GET', url: `${url()}?version=0.9.0`, token: p.ownerToken });
    assert.equal(noTag.statusCode, 422);
    assert.deepEqual(noTag.json(), {
      message: 'Failed to generate the changelog: The commit start range is unspecified, and no previous tag could be found to use instead',
    });
    const badFrom = await t.request({ method: 'GET', url: `${url()}?version=1.1.0&from=nothing`, token: p.ownerToken });
    assert.equal(badFrom.statusCode, 422);
    const post = await t.request({ method: 'POST', url: url(), token: reporterToken, payload: { version: '1.1.0' } });
    assert.equal(post.statusCode, 403);
    assert.deepEqual(post.json(), { message: '403 Forbidden - You are not allowed to commit a changelog on this branch' });
    assert.equal((await t.request({ method: 'POST', url: url(), payload: { version: '1.1.0' } })).statusCode, 401);
  });

  it('commits the release into the changelog file, newest release first, once per version', async () => {
    const before = git('rev-parse', 'refs/heads/main');
    const res = await t.request({ method: 'POST', url: url(), token: p.ownerToken, payload: { version: '1.1.0', date: '2026-01-02T00:00:00Z' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body, '200');
    const tip = git('rev-parse', 'refs/heads/main');
    assert.equal(git('rev-parse', `${tip}~1`), before);
    assert.equal(git('log', '-1', '--format=%s', tip), 'Add changelog for version 1.1.0');
    const first = `## 1.1.0 (2026-01-02)\n\n### fixed (1 change)\n\n- [Fix bug B](${ref(sha.c3)})\n\n### added (1 change)\n\n- [Add feature A](${ref(sha.c2)})\n`;
    assert.equal(git('show', `${tip}:CHANGELOG.md`) + '\n', first);

    // The same version again changes nothing.
    const again = await t.request({ method: 'POST', url: url(), token: p.ownerToken, payload: { version: '1.1.0' } });
    assert.equal(again.statusCode, 200);
    assert.equal(git('rev-parse', 'refs/heads/main'), tip);

    // A newer release goes above, an older one below.
    await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/repository/tags`, token: p.ownerToken, payload: { tag_name: 'v1.1.0', ref: sha.c6 } });
    run('git', ['fetch', '--quiet', p.gitDir, 'main'], work);
    run('git', ['reset', '--quiet', '--hard', 'FETCH_HEAD'], work);
    commit('Ship it\n\nChangelog: changed');
    await push('main');
    const newer = await t.request({
      method: 'POST', url: url(), token: p.ownerToken,
      payload: { version: '1.2.0', date: '2026-02-03T00:00:00Z', message: 'Release 1.2.0', file: 'docs/CHANGES.md' },
    });
    assert.equal(newer.statusCode, 200, newer.body);
    assert.equal(git('log', '-1', '--format=%s', 'main'), 'Release 1.2.0');
    assert.match(git('show', 'main:docs/CHANGES.md'), /^## 1\.2\.0 \(2026-02-03\)\n\n### changed \(1 change\)\n\n- \[Ship it\]/);

    const afterFirst = git('rev-parse', 'main');
    const r2 = await t.request({ method: 'POST', url: url(), token: p.ownerToken, payload: { version: '1.2.0', from: sha.c5, to: 'main', date: '2026-02-03' } });
    assert.equal(r2.statusCode, 200);
    const doc = git('show', 'main:CHANGELOG.md');
    assert.ok(doc.startsWith('## 1.2.0 (2026-02-03)'), doc);
    assert.ok(doc.includes(`\n\n## 1.1.0 (2026-01-02)\n`), doc);
    assert.notEqual(git('rev-parse', 'main'), afterFirst);
    const older = await t.request({ method: 'POST', url: url(), token: p.ownerToken, payload: { version: '1.0.1', from: sha.c1, to: sha.c2, date: '2026-01-01' } });
    assert.equal(older.statusCode, 200);
    const final = git('show', 'main:CHANGELOG.md');
    assert.ok(final.endsWith(`- [Add feature A](${ref(sha.c2)})\n\n## 1.0.1 (2026-01-01)\n\n### added (1 change)\n\n- [Add feature A](${ref(sha.c2)})`), final);
    git('fsck', '--strict', '--no-dangling');

    const noBranch = await t.request({ method: 'POST', url: url(), token: p.ownerToken, payload: { version: '3.0.0', branch: 'nope', from: sha.c1, to: 'main' } });
    assert.equal(noBranch.statusCode, 422);
    assert.deepEqual(noBranch.json(), { message: 'Failed to generate the changelog: You can only create or edit files when you are on a branch' });
  });

  it("follows the project's configuration: categories, date format, template and tag format", async () => {
    const config = [
      'date_format: "%B %-d, %Y"',
      'categories:',
      '  added: Features',
      '  fixed: Bug fixes',
      'tag_regex: \'^release-(?P<major>\\d+)\\.(?P<minor>\\d+)\\.(?P<patch>\\d+)$\'',
      'template: |',
      '  {% each categories %}',
      '  {{ title }}:{% each entries %} {{ title }} [{{ commit.trailers.Changelog }}]{% if author.reference %} {{ author.reference }}{% end %};{% end %}',
      '',
      '  {% end %}',
      '',
    ].join('\n');
    await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/repository/files/${encodeURIComponent('.gitlab/changelog_config.yml')}`,
      token: p.ownerToken, payload: { branch: 'main', content: config, commit_message: 'Configure the changelog' },
    });
    await createUser(t.db, { username: 'ada', email: 'ada@example.com' });
    await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/repository/tags`, token: p.ownerToken, payload: { tag_name: 'release-1.0.0', ref: sha.c1 } });
    const res = await t.request({ method: 'GET', url: `${url()}?version=1.1.0&to=${sha.c6}&date=2026-03-04`, token: p.ownerToken });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().notes, '## 1.1.0 (March 4, 2026)\n\nFeatures: Add feature A [added] @ada;\nBug fixes: Fix bug B [fixed] @ada;\n\n');

    const broken = await t.request({
      method: 'PUT', url: `/api/v4/projects/${p.project.id}/repository/files/${encodeURIComponent('.gitlab/changelog_config.yml')}`,
      token: p.ownerToken, payload: { branch: 'main', content: 'template: "{% if x %}never closed"\n', commit_message: 'Break it' },
    });
    assert.equal(broken.statusCode, 200, broken.body);
    const failed = await t.request({ method: 'GET', url: `${url()}?version=1.1.0&from=${sha.c1}`, token: p.ownerToken });
    assert.equal(failed.statusCode, 422);
    assert.match(failed.json().message, /^Failed to generate the changelog: Failed to parse the template/);
    const regex = await t.request({ method: 'GET', url: `${url()}?version=1.1.0&config_file=nothing.yml`, token: p.ownerToken });
    assert.equal(regex.statusCode, 200, regex.body);
  });

  it('parses and renders templates, dates and versions as the Service does', () => {
    const tpl = parseTemplate('{% each xs %}\n- {{ it }}\\\n{% if it %}!{% end %}\n{% end %}{{ a.b.0 }} {x} \\y');
    // A `%}` eats the line break after it; a backslash joins lines.
    assert.equal(renderTemplate(tpl, { xs: ['a', '', 'b'], a: { b: ['first'] } }), '- a!- - b!first {x} \\y');
    const lines = parseTemplate('{% each xs %}\n* {{ it }}\n{% end %}');
    assert.equal(renderTemplate(lines, { xs: ['a', 'b'] }), '* a\n* b\n');
    assert.throws(() => parseTemplate('{% each xs %}'), /Failed to parse the template/);
    const deep = parseTemplate('{% each a %}{% each it %}{% each it %}{% each it %}{% each it %}x{% end %}{% end %}{% end %}{% end %}{% end %}');
    assert.throws(() => renderTemplate(deep, { a: [[[[[1]]]]] }), /nest up to 4 loops/);
    assert.equal(strftime(new Date('2026-01-05T03:04:05Z'), '%Y-%m-%d %e %-m %b %A %j %%'), '2026-01-05  5 1 Jan Monday 005 %');
    assert.ok(compareVersions('1.0.0-rc1', '1.0.0') < 0);
    assert.ok(compareVersions('1.10.0', '1.9.0') > 0);
    const doc = addRelease('# Changelog\n\n## 2.0.0 (x)\n\nold\n\n## 1.0.0 (x)\n\nolder\n', { version: '1.5.0', markdown: '## 1.5.0 (y)\n\nnew\n\n' });
    assert.equal(doc, '# Changelog\n\n## 2.0.0 (x)\n\nold\n\n## 1.5.0 (y)\n\nnew\n\n## 1.0.0 (x)\n\nolder\n');
  });
});
