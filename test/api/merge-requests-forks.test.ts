/**
 * Merge requests from forks (issue 30, item 1): opened on the fork into its upstream
 * (`target_project_id`, the fork network's validation, missing branches, a duplicate), the
 * fork's head fetched into the target at refs/merge-requests/:iid/head on creation and after
 * every git push over HTTP to the fork, so changes, versions, commits, conflicts and the merge
 * happen in the target; removing the source branch only for those who may push to the fork;
 * rebasing the fork's branch (the fork's pushers, or the target's mergers when the request
 * allows collaboration); the request readable after the fork is gone.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { git as rawGit, waitFor } from '../helpers/storage-shards.ts';

const run = promisify(execFile);
const git = (gitDir: string, ...args: string[]) => rawGit(gitDir, ...args).trim();
const gitEnv = {
  ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'C', GIT_AUTHOR_EMAIL: 'c@example.com', GIT_COMMITTER_NAME: 'C', GIT_COMMITTER_EMAIL: 'c@example.com',
};

describe('merge requests from forks', () => {
  let t: ListeningTestApp;
  let owner: UserRow;
  let ownerToken: string;
  let contrib: UserRow;
  let contribToken: string;
  let upstream: { id: number; path_with_namespace: string };
  let fork: { id: number; path_with_namespace: string };
  let work: string;

  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token: string, payload?: object) =>
    t.request({ method, url: `/api/v4${url}`, token, ...(payload ? { payload } : {}) });

  async function gitDirOf(id: number): Promise<string> {
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return path.join(t.dataDir, 'repositories', row.disk_path);
  }

  const clone = () => path.join(work, 'fork');
  const sh = async (...args: string[]) => (await run('git', ['-C', clone(), ...args], { env: gitEnv })).stdout.trim();

  /** A commit on `branch` of the fork's clone, pushed over HTTP; answers its id. */
  async function pushToFork(branch: string, file: string, content: string, from?: string): Promise<string> {
    await sh('checkout', '-q', '-B', branch, ...(from ? [from] : []));
    await fs.writeFile(path.join(clone(), file), content);
    await sh('add', file);
    await sh('commit', '-q', '-m', `${file} on ${branch}`);
    await sh('push', '-q', 'origin', `${branch}:${branch}`);
    return sh('rev-parse', 'HEAD');
  }

  async function commitUpstream(file: string, content: string): Promise<string> {
    const r = await api('POST', `/projects/${upstream.id}/repository/commits`, ownerToken, {
      branch: 'main', commit_message: `upstream ${file}`, actions: [{ action: 'create', file_path: file, content }],
    });
    assert.equal(r.statusCode, 201, r.body);
    return r.json().id;
  }

  async function openFromFork(branch: string, extra: object = {}, token = contribToken) {
    return api('POST', `/projects/${fork.id}/merge_requests`, token, {
      source_branch: branch, target_branch: 'main', title: `From ${branch}`, target_project_id: upstream.id, ...extra,
    });
  }

  const mr = (iid: number, sub = '', token = ownerToken) => api('GET', `/projects/${upstream.id}/merge_requests/${iid}${sub}`, token);

  async function until(iid: number, pred: (m: Record<string, any>) => boolean): Promise<Record<string, any>> {
    return waitFor(`request !${iid}`, async () => {
      const body = (await mr(iid)).json();
      return pred(body) ? body : undefined;
    }, 20_000);
  }

  before(async () => {
    t = await startListeningApp({ KILN_JOB_POLL_MS: '20' });
    owner = await createUser(t.db, { username: 'upowner' });
    ownerToken = await createToken(t.db, owner);
    contrib = await createUser(t.db, { username: 'contrib' });
    contribToken = await createToken(t.db, contrib);
    const r = await api('POST', '/projects', ownerToken, { name: 'up', visibility: 'public', initialize_with_readme: true });
    assert.equal(r.statusCode, 201, r.body);
    upstream = r.json();
    const f = await api('POST', `/projects/${upstream.id}/fork`, contribToken, {});
    assert.equal(f.statusCode, 201, f.body);
    fork = f.json();
    await waitFor('the fork', async () => {
      const row = await t.db.selectFrom('projects').select('import_status').where('id', '=', fork.id).executeTakeFirstOrThrow();
      return row.import_status === 'finished' ? true : undefined;
    });
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-forkmr-'));
    const remote = `${t.url.replace('://', `://contrib:${contribToken}@`)}/${fork.path_with_namespace}.git`;
    await run('git', ['clone', '-q', remote, clone()], { env: gitEnv });
  });
  after(async () => {
    await t.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  it('opens a request into the upstream and follows pushes to the fork', async () => {
    const first = await pushToFork('feature', 'feature.txt', 'one\n', 'origin/main');
    const r = await openFromFork('feature');
    assert.equal(r.statusCode, 201, r.body);
    const created = r.json();
    assert.equal(created.project_id, upstream.id);
    assert.equal(created.target_project_id, upstream.id);
    assert.equal(created.source_project_id, fork.id);
    assert.equal(created.allow_collaboration, false);
    assert.equal(created.allow_maintainer_to_push, false);
    const targetDir = await gitDirOf(upstream.id);
    assert.equal(git(targetDir, 'rev-parse', `refs/merge-requests/${created.iid}/head`), first);
    const checkedMr = await until(created.iid, (m) => m.merge_status === 'can_be_merged');
    assert.equal(checkedMr.diff_refs.head_sha, first);
    assert.equal(checkedMr.diff_refs.start_sha, git(targetDir, 'rev-parse', 'main'));

    const second = await pushToFork('feature', 'more.txt', 'two\n');
    const versions = await waitFor('the second version', async () => {
      const v = (await mr(created.iid, '/versions')).json();
      return v.length === 2 ? v : undefined;
    }, 20_000);
    assert.deepEqual(versions.map((v: { head_commit_sha: string }) => v.head_commit_sha), [second, first]);
    assert.equal(git(targetDir, 'rev-parse', `refs/merge-requests/${created.iid}/head`), second);
    const changes = (await mr(created.iid, '/changes')).json();
    assert.deepEqual(changes.changes.map((c: { new_path: string }) => c.new_path).sort(), ['feature.txt', 'more.txt']);
    assert.equal(changes.source_project_id, fork.id);
    const diffs = (await mr(created.iid, '/diffs')).json();
    assert.equal(diffs.length, 2);
    const commits = (await mr(created.iid, '/commits')).json();
    assert.deepEqual(commits.map((c: { id: string }) => c.id), [second, first]);
    const after = await until(created.iid, (m) => m.merge_status === 'can_be_merged' && m.diff_refs.head_sha === second);
    assert.equal(after.sha, second);

    // The target lists the fork's request; the fork lists only those opened into it.
    const listed = (await api('GET', `/projects/${upstream.id}/merge_requests`, ownerToken)).json();
    assert.ok(listed.some((m: { iid: number }) => m.iid === created.iid));
    const forkList = (await api('GET', `/projects/${fork.id}/merge_requests`, contribToken)).json();
    assert.equal(forkList.length, 0);
  });

  it('refuses a target outside the fork network, missing branches and a duplicate', async () => {
    const other = (await api('POST', '/projects', contribToken, { name: 'unrelated', initialize_with_readme: true })).json();
    const outside = await api('POST', `/projects/${fork.id}/merge_requests`, contribToken, {
      source_branch: 'feature', target_branch: 'main', title: 'x', target_project_id: other.id,
    });
    assert.equal(outside.statusCode, 422, outside.body);
    assert.deepEqual(outside.json(), { message: ['Source project is not a fork of the target project'] });
    const missing = await openFromFork('nope');
    assert.equal(missing.statusCode, 400, missing.body);
    assert.deepEqual(missing.json().message.base, ['Source branch "nope" does not exist']);
    const missingTarget = await openFromFork('feature', { target_branch: 'gone' });
    assert.equal(missingTarget.statusCode, 400);
    assert.deepEqual(missingTarget.json().message.base, ['Target branch "gone" does not exist']);
    const dup = await openFromFork('feature');
    assert.equal(dup.statusCode, 409, dup.body);
    assert.match(dup.json().message[0], /^Another open merge request already exists for this source branch: !\d+$/);
    // Without target_project_id a fork's request goes to its upstream (Project#default_merge_request_target).
    await pushToFork('defaulted', 'd.txt', 'd\n', 'origin/main');
    const defaulted = await api('POST', `/projects/${fork.id}/merge_requests`, contribToken, {
      source_branch: 'defaulted', target_branch: 'main', title: 'default target',
    });
    assert.equal(defaulted.statusCode, 201, defaulted.body);
    assert.equal(defaulted.json().project_id, upstream.id);
    // Someone who cannot push to the fork cannot open a request from it.
    const stranger = await api('POST', `/projects/${fork.id}/merge_requests`, ownerToken, {
      source_branch: 'defaulted', target_branch: 'main', title: 'not mine', target_project_id: upstream.id,
    });
    assert.equal(stranger.statusCode, 403);
  });

  it('detects a conflict with the upstream and refuses the merge', async () => {
    await pushToFork('clash', 'clash.txt', 'fork side\n', 'origin/main');
    const created = (await openFromFork('clash')).json();
    await until(created.iid, (m) => m.merge_status === 'can_be_merged');
    await commitUpstream('clash.txt', 'upstream side\n');
    const conflicted = await until(created.iid, (m) => m.merge_status === 'cannot_be_merged');
    assert.equal(conflicted.has_conflicts, true);
    const merge = await api('PUT', `/projects/${upstream.id}/merge_requests/${created.iid}/merge`, ownerToken, {});
    assert.equal(merge.statusCode, 405, merge.body);
  });

  it('merges into the target; the source branch stays unless the merger may push to the fork', async () => {
    const head = await pushToFork('keep', 'keep.txt', 'k\n', 'origin/main');
    const kept = (await openFromFork('keep')).json();
    await until(kept.iid, (m) => m.merge_status === 'can_be_merged');
    const merged = await api('PUT', `/projects/${upstream.id}/merge_requests/${kept.iid}/merge`, ownerToken, {
      should_remove_source_branch: true,
    });
    assert.equal(merged.statusCode, 200, merged.body);
    assert.equal(merged.json().state, 'merged');
    const targetDir = await gitDirOf(upstream.id);
    const mergeCommit = merged.json().merge_commit_sha;
    assert.equal(git(targetDir, 'rev-parse', 'main'), mergeCommit);
    assert.equal(git(targetDir, 'rev-parse', `${mergeCommit}^2`), head);
    const forkDir = await gitDirOf(fork.id);
    // The upstream's owner may not push to the fork: its branch stays.
    assert.equal(git(forkDir, 'rev-parse', 'refs/heads/keep'), head);

    // An administrator may push anywhere: the fork's branch goes.
    const head2 = await pushToFork('drop', 'drop.txt', 'x\n', 'origin/main');
    const dropped = (await openFromFork('drop')).json();
    await until(dropped.iid, (m) => m.merge_status === 'can_be_merged');
    const m2 = await api('PUT', `/projects/${upstream.id}/merge_requests/${dropped.iid}/merge`, ROOT_TOKEN, {
      should_remove_source_branch: true,
    });
    assert.equal(m2.statusCode, 200, m2.body);
    await waitFor('the fork branch to go', async () => (git(forkDir, 'for-each-ref', 'refs/heads/drop') === '' ? true : undefined));
    assert.equal(git(targetDir, 'rev-parse', `${m2.json().merge_commit_sha}^2`), head2);
  });

  it("rebases the fork's branch for its pushers, and for the target's mergers when collaboration is allowed", async () => {
    await pushToFork('behind', 'behind.txt', 'b\n', 'origin/main');
    const upstreamHead = await commitUpstream('ahead.txt', 'a\n');
    const created = (await openFromFork('behind')).json();
    const refused = await api('PUT', `/projects/${upstream.id}/merge_requests/${created.iid}/rebase`, ownerToken, {});
    assert.equal(refused.statusCode, 403, refused.body);
    assert.deepEqual(refused.json(), { message: '403 Forbidden - Cannot push to source branch' });
    const ok = await api('PUT', `/projects/${upstream.id}/merge_requests/${created.iid}/rebase`, contribToken, {});
    assert.equal(ok.statusCode, 202, ok.body);
    const forkDir = await gitDirOf(fork.id);
    await waitFor('the rebase', async () => (git(forkDir, 'rev-parse', 'refs/heads/behind^') === upstreamHead ? true : undefined), 20_000);
    const targetDir = await gitDirOf(upstream.id);
    const rebased = git(forkDir, 'rev-parse', 'refs/heads/behind');
    await waitFor('the head ref', async () => (git(targetDir, 'rev-parse', `refs/merge-requests/${created.iid}/head`) === rebased ? true : undefined));

    // allow_collaboration lets the upstream's maintainer rebase the fork's branch.
    await commitUpstream('ahead2.txt', 'a2\n');
    const set = await api('PUT', `/projects/${upstream.id}/merge_requests/${created.iid}`, contribToken, { allow_collaboration: true });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(set.json().allow_collaboration, true);
    assert.equal(set.json().allow_maintainer_to_push, true);
    const byOwner = await api('PUT', `/projects/${upstream.id}/merge_requests/${created.iid}/rebase`, ownerToken, {});
    assert.equal(byOwner.statusCode, 202, byOwner.body);
    await waitFor('the second rebase', async () => (git(forkDir, 'rev-parse', 'refs/heads/behind^') === git(targetDir, 'rev-parse', 'main')
      ? true : undefined), 20_000);
    // Only someone who may push to the fork sets it.
    const notMine = await api('PUT', `/projects/${upstream.id}/merge_requests/${created.iid}`, ownerToken, { allow_collaboration: false });
    assert.equal(notMine.statusCode, 200);
    assert.equal(notMine.json().allow_collaboration, true);
  });

  it('stays readable from its head ref once the source branch and the fork are gone', async () => {
    const head = await pushToFork('ephemeral', 'e.txt', 'e\n', 'origin/main');
    const created = (await openFromFork('ephemeral')).json();
    await until(created.iid, (m) => m.merge_status === 'can_be_merged');
    await sh('push', '-q', 'origin', ':ephemeral');
    const gone = await until(created.iid, (m) => m.merge_status === 'cannot_be_merged');
    assert.equal(gone.diff_refs.head_sha, head);
    const del = await api('DELETE', `/projects/${fork.id}`, contribToken);
    assert.equal(del.statusCode, 202, del.body);
    await waitFor('the fork to go', async () => {
      const row = await t.db.selectFrom('projects').select('id').where('id', '=', fork.id).executeTakeFirst();
      return row ? undefined : true;
    }, 20_000);
    const changes = await mr(created.iid, '/changes');
    assert.equal(changes.statusCode, 200, changes.body);
    assert.deepEqual(changes.json().changes.map((c: { new_path: string }) => c.new_path), ['e.txt']);
    const commits = (await mr(created.iid, '/commits')).json();
    assert.deepEqual(commits.map((c: { id: string }) => c.id), [head]);
  });
});
