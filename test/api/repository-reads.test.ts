/**
 * Repository reads at the HTTP boundary (issue 30, item 4): compare, merge base, archives (each
 * format extracted with tar / unzip), blobs, contributors, languages and snapshots, on a real
 * repository whose history is made with the git CLI and pushed into the project.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createAdmin, createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, type CiProject } from '../helpers/ci.ts';
import { recordPush } from '../../src/domain/projects/projects.queries.ts';
import { inspectRepository } from '../../src/domain/repositories/repositories.ts';

const ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
};

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  return execFileSync(cmd, args, { cwd, env: { ...ENV, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim();
}

const ADA = { GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.com', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.com' };
const BOB = { GIT_AUTHOR_NAME: 'Bob', GIT_AUTHOR_EMAIL: 'bob@example.com', GIT_COMMITTER_NAME: 'Bob', GIT_COMMITTER_EMAIL: 'bob@example.com' };

describe('repository reads', () => {
  let t: TestApp;
  let p: CiProject;
  let work: string;
  let reporterToken: string;
  let guestToken: string;
  let outsiderToken: string;
  let adminToken: string;
  const sha: Record<string, string> = {};
  const base = () => `/api/v4/projects/${p.project.id}/repository`;
  const get = (url: string, token = p.ownerToken) => t.request({ method: 'GET', url, token });

  function write(files: Record<string, string>) {
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(work, name)), { recursive: true });
      fs.writeFileSync(path.join(work, name), content);
    }
  }
  function commit(message: string, who: Record<string, string>): string {
    run('git', ['add', '--all'], work);
    run('git', ['commit', '--quiet', '-m', message], work, who);
    return run('git', ['rev-parse', 'HEAD'], work);
  }

  before(async () => {
    t = await startTestApp();
    p = await createCiProject(t, { name: 'reads' });
    const reporter = await createUser(t.db);
    const guest = await createUser(t.db);
    reporterToken = await createToken(t.db, reporter);
    guestToken = await createToken(t.db, guest);
    outsiderToken = await createToken(t.db, await createUser(t.db));
    adminToken = await createToken(t.db, await createAdmin(t.db));
    for (const [user, level] of [[reporter, 20], [guest, 10]] as const) {
      const m = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: user.id, access_level: level } });
      assert.equal(m.statusCode, 201, m.body);
    }

    work = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-reads-'));
    run('git', ['init', '--quiet', '--initial-branch=main'], work);
    write({
      'README.md': '# Reads\n', 'src/app.rb': `${'puts 1\n'.repeat(100)}`, 'lib/x.js': `${'x();\n'.repeat(50)}`,
      'docs/guide.md': 'guide\n', 'vendor/dep.rb': 'x = 1\n'.repeat(1000),
    });
    sha.c1 = commit('Initial', ADA);
    run('git', ['tag', 'v1.0.0'], work);
    run('git', ['checkout', '--quiet', '-b', 'feature'], work);
    write({ 'src/app.rb': `${'puts 1\n'.repeat(99)}puts 2\n`, 'feature.py': 'print(1)\n'.repeat(30) });
    run('git', ['mv', 'lib/x.js', 'lib/y.js'], work);
    sha.c2 = commit('Add the feature\n\nChangelog: added', BOB);
    run('git', ['checkout', '--quiet', 'main'], work);
    write({ 'main.txt': 'main\n' });
    sha.c3 = commit('Main moves on', ADA);
    run('git', ['checkout', '--quiet', '-b', 'many', sha.c1], work);
    for (let i = 0; i < 101; i++) write({ [`many/f${String(i).padStart(3, '0')}.txt`]: `${i}\n` });
    sha.many = commit('Many files', BOB);
    run('git', ['checkout', '--quiet', 'main'], work);
    run('git', ['push', '--quiet', p.gitDir, 'main', 'feature', 'many', 'v1.0.0'], work);
    await recordPush(t.db, p.project.id, await inspectRepository(p.gitDir, null));
  });
  after(async () => {
    fs.rmSync(work, { recursive: true, force: true });
    await t.close();
  });

  it('compares against the merge base, or straight, with the Service entity', async () => {
    const res = await get(`${base()}/compare?from=main&to=feature`);
    assert.equal(res.statusCode, 200, res.body);
    const c = res.json();
    assert.deepEqual(Object.keys(c), ['commit', 'commits', 'diffs', 'compare_timeout', 'compare_same_ref', 'web_url']);
    assert.equal(c.commit.id, sha.c2);
    assert.deepEqual(c.commits.map((x: { id: string }) => x.id), [sha.c2]);
    assert.equal(c.compare_timeout, false);
    assert.equal(c.compare_same_ref, false);
    assert.match(c.web_url, new RegExp(`/-/compare/${sha.c1}\\.\\.\\.${sha.c2}$`));
    const byPath = Object.fromEntries(c.diffs.map((d: { new_path: string }) => [d.new_path, d]));
    assert.deepEqual(Object.keys(byPath).sort(), ['feature.py', 'lib/y.js', 'src/app.rb']);
    assert.deepEqual(byPath['lib/y.js'], {
      old_path: 'lib/x.js', new_path: 'lib/y.js', a_mode: '100644', b_mode: '100644', new_file: false, renamed_file: true, deleted_file: false, diff: '',
    });
    assert.equal(byPath['feature.py'].new_file, true);
    assert.equal(byPath['feature.py'].a_mode, '0');
    assert.match(byPath['src/app.rb'].diff, /^@@ -97,4 \+97,4 @@ puts 1\n puts 1\n puts 1\n puts 1\n-puts 1\n\+puts 2\n$/);

    // Straight: main's own commit shows as a deletion, as `from..to` compares the tips.
    const straight = (await get(`${base()}/compare?from=main&to=feature&straight=true`)).json();
    assert.deepEqual(straight.commits.map((x: { id: string }) => x.id), [sha.c2]);
    const deleted = straight.diffs.find((d: { old_path: string }) => d.old_path === 'main.txt');
    assert.equal(deleted.deleted_file, true);
    assert.equal(deleted.b_mode, '0');
    assert.match(straight.web_url, new RegExp(`/-/compare/${sha.c3}\\.\\.\\.${sha.c2}$`));
  });

  it('answers the same ref, an unknown from and an unknown to as the Service does', async () => {
    const same = (await get(`${base()}/compare?from=main&to=${sha.c3}`)).json();
    assert.equal(same.compare_same_ref, true);
    assert.equal(same.commit, null);
    assert.deepEqual(same.commits, []);
    assert.deepEqual(same.diffs, []);

    const noFrom = await get(`${base()}/compare?from=nothing&to=main`);
    assert.equal(noFrom.statusCode, 200, noFrom.body);
    assert.equal(noFrom.json().compare_same_ref, null);
    assert.equal(noFrom.json().commit, null);

    const noTo = await get(`${base()}/compare?from=main&to=nothing`);
    assert.equal(noTo.statusCode, 404);
    assert.deepEqual(noTo.json(), { message: '404 Ref Not Found' });
    const option = await get(`${base()}/compare?from=main&to=--output=x`);
    assert.equal(option.statusCode, 404);

    const other = await get(`${base()}/compare?from=main&to=feature&from_project_id=${p.project.id + 1000}`);
    assert.equal(other.statusCode, 400);
    assert.deepEqual(other.json(), { message: `Target project id:${p.project.id + 1000} is not a fork of project id:${p.project.id}` });
    assert.equal((await get(`${base()}/compare?from=main&to=feature&from_project_id=${p.project.id}`)).statusCode, 200);
    const missing = await get(`${base()}/compare?from=main`);
    assert.equal(missing.statusCode, 400);
  });

  it('stops the diffs at the Service limits and says so (compare_timeout)', async () => {
    const c = (await get(`${base()}/compare?from=${sha.c1}&to=many`)).json();
    assert.equal(c.compare_timeout, true);
    assert.equal(c.diffs.length, 100);
    assert.equal(c.diffs[0].new_path, 'many/f000.txt');
  });

  it('finds the merge base of two or more refs, with the Service errors', async () => {
    const res = await get(`${base()}/merge_base?refs[]=main&refs[]=feature`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().id, sha.c1);
    assert.equal(res.json().title, 'Initial');
    const three = await get(`${base()}/merge_base?refs=main,feature,${sha.many}`);
    assert.equal(three.json().id, sha.c1);
    // python-gitlab sends every listed commit id (refs[]=…), or one id alone (refs=…).
    const many = await get(`${base()}/merge_base?${[sha.c1, sha.c2, sha.c3, sha.many, ...Array(30).fill('main')].map((r) => `refs[]=${r}`).join('&')}`);
    assert.equal(many.json().id, sha.c1);
    const lone = await get(`${base()}/merge_base?refs=${sha.c1}`);
    assert.deepEqual(lone.json(), { message: 'Provide at least 2 refs' });
    assert.deepEqual((await get(`${base()}/merge_base?refs=`)).json(), { message: 'Provide at least 2 refs' });
    const one = await get(`${base()}/merge_base?refs[]=main`);
    assert.equal(one.statusCode, 400);
    assert.deepEqual(one.json(), { message: 'Provide at least 2 refs' });
    const unknown = await get(`${base()}/merge_base?refs[]=main&refs[]=nope&refs[]=-x`);
    assert.deepEqual(unknown.json(), { message: 'Could not find refs: nope, -x' });
    const single = await get(`${base()}/merge_base?refs[]=main&refs[]=nope`);
    assert.deepEqual(single.json(), { message: 'Could not find ref: nope' });
  });

  async function extract(body: Buffer, ext: string): Promise<string[]> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-archive-'));
    try {
      const file = path.join(dir, `a.${ext}`);
      fs.writeFileSync(file, body);
      const out = path.join(dir, 'out');
      fs.mkdirSync(out);
      if (ext === 'zip') run('unzip', ['-q', file, '-d', out], dir);
      else run('tar', ['-x', ...(ext === 'tar.gz' ? ['-z'] : ext === 'tar.bz2' ? ['-j'] : []), '-f', file, '-C', out], dir);
      return run('find', ['.', '-type', 'f'], out).split('\n').map((f) => f.slice(2)).sort();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it('streams archives in every format, named as the Service names them', async () => {
    const cases: [string, string][] = [
      ['/archive', 'tar.gz'], ['/archive.tar.gz', 'tar.gz'], ['/archive.tar.bz2', 'tar.bz2'], ['/archive.tbz', 'tar.bz2'],
      ['/archive.tbz2', 'tar.bz2'], ['/archive.tb2', 'tar.bz2'], ['/archive.bz2', 'tar.bz2'], ['/archive.tar', 'tar'],
      ['/archive.zip', 'zip'], ['/archive?format=zip', 'zip'],
    ];
    const prefix = `${p.project.path}-main-${sha.c3}`;
    for (const [suffix, ext] of cases) {
      const res = await get(`${base()}${suffix}`);
      assert.equal(res.statusCode, 200, `${suffix}: ${res.body}`);
      assert.equal(res.headers['content-disposition'], `attachment; filename="${prefix}.${ext}"`, suffix);
      const files = await extract(res.rawPayload, ext);
      assert.deepEqual(files, [
        'README.md', 'docs/guide.md', 'lib/x.js', 'main.txt', 'src/app.rb', 'vendor/dep.rb',
      ].map((f) => `${prefix}/${f}`), suffix);
    }
  });

  it('answers the same bytes for the default branch named or not (python-gitlab compares them)', async () => {
    const plain = await get(`${base()}/archive`);
    const named = await get(`${base()}/archive?sha=main`);
    assert.equal(plain.headers['content-type'], 'application/octet-stream');
    assert.ok(plain.rawPayload.length > 0);
    assert.ok(plain.rawPayload.equals(named.rawPayload));
    assert.equal((await get(`${base()}/archive.zip`)).headers['content-type'], 'application/zip');
  });

  it('archives a tag and a sub-folder; an unknown ref or path is 404 File', async () => {
    const tag = await get(`${base()}/archive.tar?sha=v1.0.0&path=src`);
    assert.equal(tag.statusCode, 200, tag.body);
    const prefix = `${p.project.path}-v1.0.0-${sha.c1}-src`;
    assert.equal(tag.headers['content-disposition'], `attachment; filename="${prefix}.tar"`);
    assert.deepEqual(await extract(tag.rawPayload, 'tar'), [`${prefix}/src/app.rb`]);
    const branch = await get(`${base()}/archive.zip?sha=feature`);
    assert.ok(String(branch.headers['content-disposition']).includes(`-feature-${sha.c2}.zip`));
    for (const q of ['sha=nothing', 'sha=main&path=nowhere', 'sha=--help', 'path=../etc']) {
      const res = await get(`${base()}/archive?${q}`);
      assert.equal(res.statusCode, 404, q);
      assert.deepEqual(res.json(), { message: '404 File Not Found' }, q);
    }
  });

  it('reads blobs by id, as JSON and raw; what is not a blob is 404 Blob', async () => {
    const tree = (await get(`${base()}/tree?path=src`)).json();
    const blobId = tree[0].id as string;
    const res = await get(`${base()}/blobs/${blobId}`);
    assert.equal(res.statusCode, 200, res.body);
    const content = 'puts 1\n'.repeat(100);
    assert.deepEqual(res.json(), { size: content.length, encoding: 'base64', content: Buffer.from(content).toString('base64'), sha: blobId });
    const short = await get(`${base()}/blobs/${blobId.slice(0, 10)}`);
    assert.equal(short.json().sha, blobId);
    const raw = await get(`${base()}/blobs/${blobId}/raw`);
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.body, content);
    assert.match(String(raw.headers['content-type']), /^text\/plain/);
    for (const id of [sha.c1, 'main', '0'.repeat(40), 'zz']) {
      const r = await get(`${base()}/blobs/${id}`);
      assert.equal(r.statusCode, 404, id);
      assert.deepEqual(r.json(), { message: '404 Blob Not Found' });
      assert.equal((await get(`${base()}/blobs/${id}/raw`)).statusCode, 404);
    }
  });

  it('lists contributors of the default branch, ordered and sorted', async () => {
    const res = await get(`${base()}/contributors`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), [{ name: 'Ada', email: 'ada@example.com', commits: 2, additions: 0, deletions: 0 }]);
    // Bob commits to main too (through a push), so the orders differ.
    run('git', ['checkout', '--quiet', 'main'], work);
    write({ 'bob.txt': 'bob\n' });
    commit('Bob was here', BOB);
    run('git', ['push', '--quiet', p.gitDir, 'main'], work);
    const byCommits = (await get(`${base()}/contributors?order_by=commits&sort=desc`)).json();
    assert.deepEqual(byCommits.map((c: { name: string }) => c.name), ['Ada', 'Bob']);
    const byName = (await get(`${base()}/contributors?order_by=name&sort=desc`)).json();
    assert.deepEqual(byName.map((c: { name: string }) => c.name), ['Bob', 'Ada']);
    const byEmail = (await get(`${base()}/contributors?order_by=email`)).json();
    assert.deepEqual(byEmail.map((c: { email: string }) => c.email), ['ada@example.com', 'bob@example.com']);
    const paged = await get(`${base()}/contributors?per_page=1&page=2&order_by=name`);
    assert.deepEqual(paged.json().map((c: { name: string }) => c.name), ['Bob']);
    assert.equal(paged.headers['x-total'], '2');
    assert.equal((await get(`${base()}/contributors?order_by=size`)).statusCode, 400);
  });

  it('answers the languages of the default branch in percent, leaving out vendored and documentation files', async () => {
    const res = await get(`/api/v4/projects/${p.project.id}/languages`);
    assert.equal(res.statusCode, 200, res.body);
    // src/app.rb 700 bytes, lib/x.js 250 bytes; README, docs, vendor and text files do not count.
    assert.deepEqual(res.json(), { Ruby: 73.68, JavaScript: 26.32 });
    // Anyone who may see the project, as in the Service (a guest too).
    assert.equal((await get(`/api/v4/projects/${p.project.id}/languages`, guestToken)).statusCode, 200);
    assert.equal((await get(`/api/v4/projects/${p.project.id}/languages`, outsiderToken)).statusCode, 404);
  });

  it('guards reads: download_code for a private project (a guest is refused), invisible to outsiders', async () => {
    for (const url of [`${base()}/compare?from=main&to=feature`, `${base()}/archive`, `${base()}/contributors`, `${base()}/merge_base?refs=main,feature`]) {
      assert.equal((await get(url, reporterToken)).statusCode, 200, url);
      const guest = await get(url, guestToken);
      assert.equal(guest.statusCode, 403, url);
      const outsider = await get(url, outsiderToken);
      assert.equal(outsider.statusCode, 404, url);
      assert.deepEqual(outsider.json(), { message: '404 Project Not Found' });
      assert.equal((await t.request({ method: 'GET', url })).statusCode, 404, url);
    }
  });

  it('follows the repository feature: disabled for everyone, private for members only', async () => {
    const setLevels = async (levels: Record<string, string>) => {
      const res = await t.request({ method: 'PUT', url: `/api/v4/projects/${p.project.id}`, token: p.ownerToken, payload: levels });
      assert.equal(res.statusCode, 200, res.body);
    };
    await setLevels({ visibility: 'public' });
    assert.equal((await t.request({ method: 'GET', url: `${base()}/contributors` })).statusCode, 200);
    await setLevels({ merge_requests_access_level: 'private', builds_access_level: 'private', repository_access_level: 'private' });
    assert.equal((await t.request({ method: 'GET', url: `${base()}/contributors` })).statusCode, 403);
    assert.equal((await get(`${base()}/contributors`, outsiderToken)).statusCode, 403);
    assert.equal((await get(`${base()}/contributors`, reporterToken)).statusCode, 200);
    await setLevels({ merge_requests_access_level: 'disabled', builds_access_level: 'disabled', repository_access_level: 'disabled' });
    const owner = await get(`${base()}/archive`);
    assert.equal(owner.statusCode, 403);
    assert.deepEqual(owner.json(), { message: '403 Forbidden' });
    assert.equal((await get(`${base()}/contributors`, adminToken)).statusCode, 403);
    await setLevels({ repository_access_level: 'enabled', merge_requests_access_level: 'enabled', builds_access_level: 'enabled', visibility: 'private' });
    assert.equal((await get(`${base()}/contributors`)).statusCode, 200);
  });

  it('gives administrators a tar snapshot of the bare repository that git can read', async () => {
    assert.equal((await get(`/api/v4/projects/${p.project.id}/snapshot`)).statusCode, 403);
    assert.equal((await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/snapshot` })).statusCode, 401);
    assert.equal((await get('/api/v4/projects/999999/snapshot')).statusCode, 403);
    assert.equal((await get('/api/v4/projects/999999/snapshot', adminToken)).statusCode, 404);
    const res = await get(`/api/v4/projects/${p.project.id}/snapshot`, adminToken);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-disposition'], 'attachment; filename="snapshot.tar"');
    assert.equal(res.headers['content-type'], 'application/x-tar');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-snapshot-'));
    try {
      fs.writeFileSync(path.join(dir, 's.tar'), res.rawPayload);
      const repo = path.join(dir, 'repo.git');
      fs.mkdirSync(repo);
      run('tar', ['-x', '-f', path.join(dir, 's.tar'), '-C', repo], dir);
      assert.ok(!fs.existsSync(path.join(repo, 'config')));
      run('git', ['init', '--quiet', '--bare', repo], dir);
      assert.equal(run('git', ['--git-dir', repo, 'rev-parse', 'refs/heads/feature'], dir), sha.c2);
      run('git', ['--git-dir', repo, 'fsck', '--no-dangling'], dir);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const wiki = await get(`/api/v4/projects/${p.project.id}/snapshot?wiki=true`, adminToken);
    assert.equal(wiki.statusCode, 404);
  });
});
