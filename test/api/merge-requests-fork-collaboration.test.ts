/**
 * Pushes to a fork by the target's mergers when its merge request allows collaboration (issue 30):
 * with git over HTTP and SSH (the access check, then the pre-receive check of each ref) and
 * through the commits API, on the request's source branch only, while the request is open and
 * the branch unprotected in the fork; the files API stays with the fork's own pushers (its
 * `authorize! :push_code`). The entity shows allow_collaboration only while a collaborative push
 * is possible (MergeRequest#allow_collaboration).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { git as rawGit, waitFor } from '../helpers/storage-shards.ts';

interface Run { code: number; stdout: string; stderr: string }

const PUSH_CODE_DENIED = /You are not allowed to push code to this project\./;

describe("pushes to a fork's branch by the target's mergers (allow_collaboration)", () => {
  let t: ListeningTestApp;
  let work: string;
  let owner: UserRow;
  let ownerToken: string;
  let contribToken: string;
  let devToken: string;
  let upstream: { id: number; path_with_namespace: string };
  let fork: { id: number; path_with_namespace: string };
  let iid: number;
  let sshKey: string;

  function run(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
    return new Promise((resolve) => {
      execFile('git', args, {
        cwd,
        env: {
          PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0',
          GIT_AUTHOR_NAME: 'C', GIT_AUTHOR_EMAIL: 'c@example.com', GIT_COMMITTER_NAME: 'C', GIT_COMMITTER_EMAIL: 'c@example.com',
          LANG: 'C', ...env,
        },
      }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ code, stdout: stdout.trim(), stderr });
      });
    });
  }

  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token: string, payload?: object) =>
    t.request({ method, url: `/api/v4${url}`, token, ...(payload ? { payload } : {}) });

  async function forkDir(): Promise<string> {
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', fork.id).executeTakeFirstOrThrow();
    return path.join(t.dataDir, 'repositories', row.disk_path);
  }
  async function upstreamDir(): Promise<string> {
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', upstream.id).executeTakeFirstOrThrow();
    return path.join(t.dataDir, 'repositories', row.disk_path);
  }
  const forkHead = async (branch: string) => rawGit(await forkDir(), 'for-each-ref', '--format=%(objectname)', `refs/heads/${branch}`).trim();

  /** A clone of the fork over HTTP with `user`'s token. */
  async function cloneAs(name: string, username: string, token: string): Promise<string> {
    const dir = path.join(work, name);
    const remote = `${t.url.replace('://', `://${username}:${token}@`)}/${fork.path_with_namespace}.git`;
    const r = await run(work, ['clone', '-q', remote, dir]);
    assert.equal(r.code, 0, r.stderr);
    return dir;
  }

  /** A new commit on `branch` (from `from`) in `dir`; answers its id without pushing it. */
  async function commit(dir: string, branch: string, file: string, from?: string): Promise<string> {
    assert.equal((await run(dir, ['checkout', '-q', '-B', branch, ...(from ? [from] : [])])).code, 0);
    await fs.writeFile(path.join(dir, file), `${file} ${Date.now()}\n`);
    assert.equal((await run(dir, ['add', file])).code, 0);
    assert.equal((await run(dir, ['commit', '-q', '-m', `${file} on ${branch}`])).code, 0);
    return (await run(dir, ['rev-parse', 'HEAD'])).stdout;
  }

  const push = (dir: string, refspec: string, env: Record<string, string> = {}) => run(dir, ['push', 'origin', refspec], env);

  before(async () => {
    t = await startListeningApp({ KILN_JOB_POLL_MS: '20' }, { ssh: true });
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-collab-'));
    owner = await createUser(t.db, { username: 'upowner' });
    ownerToken = await createToken(t.db, owner);
    const contrib = await createUser(t.db, { username: 'contrib' });
    contribToken = await createToken(t.db, contrib);
    const dev = await createUser(t.db, { username: 'updev' });
    devToken = await createToken(t.db, dev);
    const r = await api('POST', '/projects', ownerToken, { name: 'up', visibility: 'public', initialize_with_readme: true });
    assert.equal(r.statusCode, 201, r.body);
    upstream = r.json();
    const m = await api('POST', `/projects/${upstream.id}/members`, ownerToken, { user_id: dev.id, access_level: 30 });
    assert.equal(m.statusCode, 201, m.body);
    const f = await api('POST', `/projects/${upstream.id}/fork`, contribToken, {});
    assert.equal(f.statusCode, 201, f.body);
    fork = f.json();
    await waitFor('the fork', async () => {
      const row = await t.db.selectFrom('projects').select('import_status').where('id', '=', fork.id).executeTakeFirstOrThrow();
      return row.import_status === 'finished' ? true : undefined;
    });
    // The target's owner signs in over SSH with a key of their own.
    sshKey = path.join(work, 'owner-key');
    await new Promise<void>((resolve, reject) => {
      execFile('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'owner@example.com', '-f', sshKey], (err) => (err ? reject(err) : resolve()));
    });
    const key = await api('POST', '/user/keys', ownerToken, { title: 'owner', key: (await fs.readFile(`${sshKey}.pub`, 'utf8')).trim() });
    assert.equal(key.statusCode, 201, key.body);
  });
  after(async () => {
    await t.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  it('lets the target\'s maintainer push the source branch over HTTP and SSH once the request allows it, and nothing else', async () => {
    const mine = await cloneAs('contrib', 'contrib', contribToken);
    await commit(mine, 'collab', 'c.txt', 'origin/main');
    const otherHead = await commit(mine, 'other', 'o.txt', 'origin/main');
    assert.equal((await push(mine, 'collab')).code, 0);
    assert.equal((await push(mine, 'other')).code, 0);
    const opened = await api('POST', `/projects/${fork.id}/merge_requests`, contribToken, {
      source_branch: 'collab', target_branch: 'main', title: 'Collaborate', target_project_id: upstream.id,
    });
    assert.equal(opened.statusCode, 201, opened.body);
    iid = opened.json().iid;
    assert.equal(opened.json().allow_collaboration, false);

    // Without collaboration the target's owner is nobody in the fork.
    const theirs = await cloneAs('owner', 'upowner', ownerToken);
    assert.equal((await run(theirs, ['checkout', '-q', '-B', 'collab', 'origin/collab'])).code, 0);
    const early = await commit(theirs, 'collab', 'early.txt');
    const refused = await push(theirs, 'collab');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, PUSH_CODE_DENIED);
    assert.notEqual(await forkHead('collab'), early);

    const set = await api('PUT', `/projects/${upstream.id}/merge_requests/${iid}`, contribToken, { allow_collaboration: true });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(set.json().allow_collaboration, true);
    assert.equal(set.json().allow_maintainer_to_push, true);
    const listed = (await api('GET', `/projects/${upstream.id}/merge_requests?source_branch=collab`, ownerToken)).json();
    assert.equal(listed[0].allow_maintainer_to_push, true);

    // Now the push lands, in the fork, and the target follows the request's head.
    const ok = await push(theirs, 'collab');
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(await forkHead('collab'), early);
    const target = await upstreamDir();
    await waitFor('the head ref', async () => (rawGit(target, 'rev-parse', `refs/merge-requests/${iid}/head`).trim() === early ? true : undefined), 20_000);

    // Other branches (forced, so the server is asked at all), new branches and tags of the fork stay the fork's own.
    const elsewhere = await push(theirs, '+HEAD:refs/heads/other');
    assert.notEqual(elsewhere.code, 0);
    assert.match(elsewhere.stderr, PUSH_CODE_DENIED);
    assert.equal(await forkHead('other'), otherHead);
    const created = await push(theirs, 'HEAD:refs/heads/brand-new');
    assert.match(created.stderr, PUSH_CODE_DENIED);
    assert.equal((await run(theirs, ['tag', 'v-collab'])).code, 0);
    const tag = await push(theirs, 'refs/tags/v-collab');
    assert.match(tag.stderr, PUSH_CODE_DENIED);
    // One refused ref refuses the whole push.
    await commit(theirs, 'collab', 'mixed.txt');
    const mixed = await run(theirs, ['push', 'origin', 'collab', '+HEAD:refs/heads/other']);
    assert.match(mixed.stderr, PUSH_CODE_DENIED);
    assert.equal(await forkHead('collab'), early);
    assert.equal(await forkHead('brand-new'), '');
    assert.equal(rawGit(await forkDir(), 'tag', '--list', 'v-collab').trim(), '');

    // A Developer of the target cannot merge into its protected main: no collaborator.
    const dev = await cloneAs('dev', 'updev', devToken);
    assert.equal((await run(dev, ['checkout', '-q', '-B', 'collab', 'origin/collab'])).code, 0);
    await commit(dev, 'collab', 'dev.txt');
    const byDev = await push(dev, 'collab');
    assert.notEqual(byDev.code, 0);
    assert.match(byDev.stderr, PUSH_CODE_DENIED);

    // Over SSH, the same.
    const ssh = `ssh -i ${sshKey} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes -o BatchMode=yes -o LogLevel=ERROR -p ${t.sshPort}`;
    const sshUrl = `ssh://git@127.0.0.1:${t.sshPort}/${fork.path_with_namespace}.git`;
    assert.equal((await run(theirs, ['remote', 'set-url', 'origin', sshUrl])).code, 0);
    const overSsh = await commit(theirs, 'collab', 'ssh.txt');
    const sshPush = await push(theirs, 'collab', { GIT_SSH_COMMAND: ssh });
    assert.equal(sshPush.code, 0, sshPush.stderr);
    assert.equal(await forkHead('collab'), overSsh);
    const sshElsewhere = await push(theirs, '+HEAD:refs/heads/other', { GIT_SSH_COMMAND: ssh });
    assert.match(sshElsewhere.stderr, PUSH_CODE_DENIED);
    assert.equal(await forkHead('other'), otherHead);
  });

  it('through the commits API on that branch only; the files API stays with the fork\'s pushers', async () => {
    const write = (branch: string, file: string) => api('POST', `/projects/${fork.id}/repository/commits`, ownerToken, {
      branch, commit_message: `api ${file}`, actions: [{ action: 'create', file_path: file, content: 'x\n' }],
    });
    const ok = await write('collab', 'api.txt');
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(await forkHead('collab'), ok.json().id);
    const other = await write('other', 'api2.txt');
    assert.equal(other.statusCode, 403, other.body);
    assert.deepEqual(other.json(), { message: '403 Forbidden - You are not allowed to push into this branch' });
    const files = await api('POST', `/projects/${fork.id}/repository/files/f.txt`, ownerToken, {
      branch: 'collab', commit_message: 'file', content: 'f\n',
    });
    assert.equal(files.statusCode, 403, files.body);
    // An internal fork has no collaboration path through the API (UserAccess#branch_allows_collaboration_for?).
    const internal = await api('PUT', `/projects/${fork.id}`, contribToken, { visibility: 'internal' });
    assert.equal(internal.statusCode, 200, internal.body);
    const inInternal = await write('collab', 'api3.txt');
    assert.equal(inInternal.statusCode, 403, inInternal.body);
    const back = await api('PUT', `/projects/${fork.id}`, contribToken, { visibility: 'public' });
    assert.equal(back.statusCode, 200, back.body);
  });

  it('not to a branch protected in the fork, nor while the request is closed or once it is merged', async () => {
    const theirs = path.join(work, 'owner');
    const http = `${t.url.replace('://', `://upowner:${ownerToken}@`)}/${fork.path_with_namespace}.git`;
    assert.equal((await run(theirs, ['remote', 'set-url', 'origin', http])).code, 0);
    assert.equal((await run(theirs, ['fetch', '-q', 'origin'])).code, 0);
    assert.equal((await run(theirs, ['checkout', '-q', '-B', 'collab', 'origin/collab'])).code, 0);

    const protect = await api('POST', `/projects/${fork.id}/protected_branches`, contribToken, { name: 'collab' });
    assert.equal(protect.statusCode, 201, protect.body);
    const shown = (await api('GET', `/projects/${upstream.id}/merge_requests/${iid}`, ownerToken)).json();
    assert.equal(shown.allow_collaboration, false);
    assert.equal(shown.allow_maintainer_to_push, false);
    await commit(theirs, 'collab', 'guarded.txt');
    const guarded = await push(theirs, 'collab');
    assert.match(guarded.stderr, /You are not allowed to push code to protected branches on this project\./);
    const guardedApi = await api('POST', `/projects/${fork.id}/repository/commits`, ownerToken, {
      branch: 'collab', commit_message: 'guarded', actions: [{ action: 'create', file_path: 'g.txt', content: 'g\n' }],
    });
    assert.equal(guardedApi.statusCode, 403, guardedApi.body);
    const unprotect = await api('DELETE', `/projects/${fork.id}/protected_branches/collab`, contribToken);
    assert.equal(unprotect.statusCode, 204, unprotect.body);

    const close = await api('PUT', `/projects/${upstream.id}/merge_requests/${iid}`, contribToken, { state_event: 'close' });
    assert.equal(close.statusCode, 200, close.body);
    const closed = await push(theirs, 'collab');
    assert.match(closed.stderr, PUSH_CODE_DENIED);
    const reopen = await api('PUT', `/projects/${upstream.id}/merge_requests/${iid}`, contribToken, { state_event: 'reopen' });
    assert.equal(reopen.statusCode, 200, reopen.body);
    const reopened = await push(theirs, 'collab');
    assert.equal(reopened.code, 0, reopened.stderr);
    const head = (await run(theirs, ['rev-parse', 'HEAD'])).stdout;

    await waitFor('mergeable', async () => {
      const body = (await api('GET', `/projects/${upstream.id}/merge_requests/${iid}`, ownerToken)).json();
      return body.merge_status === 'can_be_merged' && body.sha === head ? true : undefined;
    }, 20_000);
    const merged = await api('PUT', `/projects/${upstream.id}/merge_requests/${iid}/merge`, ownerToken, {});
    assert.equal(merged.statusCode, 200, merged.body);
    await commit(theirs, 'collab', 'late.txt');
    const late = await push(theirs, 'collab');
    assert.match(late.stderr, PUSH_CODE_DENIED);
    assert.equal(await forkHead('collab'), head);
  });
});
