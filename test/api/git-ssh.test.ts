/**
 * Git over SSH (issue 31, items 1 and 2) with the real `ssh` and `git` clients: users clone and
 * push with their SSH keys under the same rules as over HTTP (a Reporter reads but may not push,
 * a blocked user and an expired key are refused with the reason), push options and pipelines
 * follow a push as over HTTP, an unknown key does not authenticate, nothing but git's commands
 * runs, and a deploy key clones the projects it is enabled on and pushes only with can_push.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createUser, createToken } from '../helpers/factories.ts';
import { tempDir } from '../helpers/git.ts';
import type { UserRow } from '../../src/db/types.ts';

interface Run { code: number; stdout: string; stderr: string }

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, {
      cwd,
      env: {
        PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0',
        GIT_AUTHOR_NAME: 'Tester', GIT_AUTHOR_EMAIL: 'tester@example.com', GIT_COMMITTER_NAME: 'Tester',
        GIT_COMMITTER_EMAIL: 'tester@example.com', LANG: 'C', ...env,
      },
    }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const sshOptions = (key: string, port: number) => [
  '-i', key, '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'IdentitiesOnly=yes',
  '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR', '-p', String(port),
];

describe('git over SSH', () => {
  let t: TestApp;
  let dir: string;
  let port: number;
  let alice: UserRow;
  let aliceToken: string;
  let project: { id: number; path_with_namespace: string; ssh_url_to_repo: string };
  const keys: Record<string, { file: string; pub: string }> = {};

  async function makeKey(name: string, type: 'ed25519' | 'rsa' | 'ecdsa' = 'ed25519') {
    const file = path.join(dir, name);
    const size = type === 'rsa' ? ['-b', '3072'] : [];
    const r = await run('ssh-keygen', ['-q', '-t', type, ...size, '-N', '', '-C', `${name}@example.com`, '-f', file], dir);
    assert.equal(r.code, 0, r.stderr);
    keys[name] = { file, pub: (await fs.readFile(`${file}.pub`, 'utf8')).trim() };
    return keys[name];
  }

  const git = (key: string, args: string[], cwd = dir) => run('git', args, cwd, {
    GIT_SSH_COMMAND: `ssh ${sshOptions(keys[key].file, port).join(' ')}`,
  });
  const ssh = (key: string, command: string[]) => run('ssh', [...sshOptions(keys[key].file, port), 'git@127.0.0.1', ...command], dir);
  const url = () => `ssh://git@127.0.0.1:${port}/${project.path_with_namespace}.git`;

  async function addUserKey(token: string, name: string, type: 'ed25519' | 'rsa' | 'ecdsa' = 'ed25519') {
    const k = await makeKey(name, type);
    const res = await t.request({ method: 'POST', url: '/api/v4/user/keys', token, payload: { title: name, key: k.pub } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: number };
  }

  before(async () => {
    t = await startTestApp({}, { ssh: true });
    port = t.sshPort!;
    dir = await tempDir('kiln-ssh-');
    alice = await createUser(t.db, { username: 'alice' });
    aliceToken = await createToken(t.db, alice);
    const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: aliceToken, payload: { name: 'tools', initialize_with_readme: true } });
    assert.equal(res.statusCode, 201, res.body);
    project = res.json();
    await addUserKey(aliceToken, 'alice');
  });
  after(async () => {
    await t.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('clones with a user key, in both URL forms', async () => {
    const a = await git('alice', ['clone', '--quiet', url(), 'clone-a']);
    assert.equal(a.code, 0, a.stderr);
    assert.ok((await fs.readFile(path.join(dir, 'clone-a', 'README.md'), 'utf8')).length > 0);
    // scp-like `git@host:path.git`; the port comes from the ssh command.
    const b = await git('alice', ['clone', '--quiet', `git@127.0.0.1:${project.path_with_namespace}.git`, 'clone-b']);
    assert.equal(b.code, 0, b.stderr);
  });

  it("clones and pushes the project's wiki (<project>.wiki.git), and the page shows through the API", async () => {
    const page = await t.request({
      method: 'POST', url: `/api/v4/projects/${project.id}/wikis`, token: aliceToken, payload: { title: 'Over SSH', content: 'ssh page' },
    });
    assert.equal(page.statusCode, 201, page.body);
    const wikiUrl = `ssh://git@127.0.0.1:${port}/${project.path_with_namespace}.wiki.git`;
    const clone = await git('alice', ['clone', '--quiet', wikiUrl, 'wiki']);
    assert.equal(clone.code, 0, clone.stderr);
    assert.equal(await fs.readFile(path.join(dir, 'wiki', 'Over-SSH.md'), 'utf8'), 'ssh page');
    await fs.writeFile(path.join(dir, 'wiki', 'Second.md'), 'pushed over ssh');
    assert.equal((await run('git', ['add', '.'], path.join(dir, 'wiki'))).code, 0);
    assert.equal((await run('git', ['commit', '--quiet', '-m', 'second'], path.join(dir, 'wiki'))).code, 0);
    const push = await git('alice', ['push', '--quiet', 'origin', 'HEAD:main'], path.join(dir, 'wiki'));
    assert.equal(push.code, 0, push.stderr);
    const read = await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/wikis/Second`, token: aliceToken });
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(read.json().content, 'pushed over ssh');
  });

  async function commitIn(clone: string, file: string, content: string) {
    await fs.writeFile(path.join(dir, clone, file), content);
    assert.equal((await run('git', ['add', file], path.join(dir, clone))).code, 0);
    assert.equal((await run('git', ['commit', '--quiet', '-m', `change ${file}`], path.join(dir, clone))).code, 0);
    return (await run('git', ['rev-parse', 'HEAD'], path.join(dir, clone))).stdout.trim();
  }

  async function waitFor<T>(probe: () => Promise<T | undefined>): Promise<T> {
    for (let i = 0; i < 200; i++) {
      const found = await probe();
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('timed out');
  }

  it('pushes with a user key: the branch moves, the push is an event, push options reach the pipeline', async () => {
    const sha = await commitIn('clone-a', '.gitlab-ci.yml', 'build:\n  script: make\n');
    const r = await git('alice', ['push', '--quiet', '-o', 'ci.skip', 'origin', 'HEAD'], path.join(dir, 'clone-a'));
    assert.equal(r.code, 0, r.stderr);
    const branch = await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/repository/branches/main`, token: aliceToken });
    assert.equal(branch.json().commit.id, sha);
    const pipeline = await waitFor(async () => {
      const list = (await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/pipelines`, token: aliceToken })).json();
      return list.find((p: { sha: string }) => p.sha === sha) as { status: string; source: string } | undefined;
    });
    assert.equal(pipeline.source, 'push');
    assert.equal(pipeline.status, 'skipped');
    const event = await waitFor(async () => {
      const events = (await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/events`, token: aliceToken })).json();
      return events.find((e: { action_name: string }) => e.action_name === 'pushed to') as { author_id: number } | undefined;
    });
    assert.equal(event.author_id, alice.id);
    // The key is marked used.
    const key = await t.db.selectFrom('keys').select('last_used_at').where('user_id', '=', alice.id).executeTakeFirstOrThrow();
    assert.ok(key.last_used_at);
  });

  it('speaks protocol v2 when the client asks (GIT_PROTOCOL)', async () => {
    const r = await run('git', ['-c', 'protocol.version=2', 'ls-remote', url()], dir, {
      GIT_SSH_COMMAND: `ssh ${sshOptions(keys.alice.file, port).join(' ')}`, GIT_TRACE_PACKET: '1',
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /refs\/heads\/main/);
    assert.match(r.stderr, /version 2/);
  });

  it('serves git archive --remote (git-upload-archive)', async () => {
    const r = await git('alice', ['archive', `--remote=${url()}`, '--format=tar', '-o', 'remote.tar', 'HEAD', 'README.md']);
    assert.equal(r.code, 0, r.stderr);
    const list = await run('tar', ['-tf', 'remote.tar'], dir);
    assert.equal(list.stdout.trim(), 'README.md');
  });

  it('lets a Reporter clone but not push, with the reason', async () => {
    const bob = await createUser(t.db, { username: 'bob' });
    const bobToken = await createToken(t.db, bob);
    const member = await t.request({
      method: 'POST', url: `/api/v4/projects/${project.id}/members`, token: aliceToken, payload: { user_id: bob.id, access_level: 20 },
    });
    assert.equal(member.statusCode, 201, member.body);
    // An RSA key (rsa-sha2 signatures over an ssh-rsa key).
    await addUserKey(bobToken, 'bob', 'rsa');
    const clone = await git('bob', ['clone', '--quiet', url(), 'clone-bob']);
    assert.equal(clone.code, 0, clone.stderr);
    await commitIn('clone-bob', 'bob.txt', 'bob\n');
    const push = await git('bob', ['push', '--quiet', 'origin', 'HEAD'], path.join(dir, 'clone-bob'));
    assert.notEqual(push.code, 0);
    assert.match(push.stderr, /You are not allowed to push code to this project\./);

    // As a Developer Bob may push, but not to the protected default branch: the same
    // pre-receive check as over HTTP, and another branch takes the push.
    const promoted = await t.request({
      method: 'PUT', url: `/api/v4/projects/${project.id}/members/${bob.id}`, token: aliceToken, payload: { access_level: 30 },
    });
    assert.equal(promoted.statusCode, 200, promoted.body);
    const protectedPush = await git('bob', ['push', '--quiet', 'origin', 'HEAD:main'], path.join(dir, 'clone-bob'));
    assert.notEqual(protectedPush.code, 0);
    assert.match(protectedPush.stderr, /You are not allowed to push code to protected branches on this project\./);
    const branchPush = await git('bob', ['push', '--quiet', 'origin', 'HEAD:refs/heads/bob-work'], path.join(dir, 'clone-bob'));
    assert.equal(branchPush.code, 0, branchPush.stderr);
  });

  it('hides a private project from a user who is not a member', async () => {
    const eve = await createUser(t.db, { username: 'eve' });
    await addUserKey(await createToken(t.db, eve), 'eve', 'ecdsa');
    const r = await git('eve', ['clone', '--quiet', url(), 'clone-eve']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /The project you were looking for could not be found or you don't have permission to view it\./);
  });

  it('refuses an unknown key, another user name, a blocked user and an expired key', async () => {
    await makeKey('stranger');
    const unknown = await git('stranger', ['ls-remote', url()]);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /Permission denied \(publickey\)/);
    const otherUser = await run('ssh', [...sshOptions(keys.alice.file, port), `alice@127.0.0.1`, 'git-upload-pack', `'${project.path_with_namespace}.git'`], dir);
    assert.notEqual(otherUser.code, 0);
    assert.match(otherUser.stderr, /Permission denied \(publickey\)/);

    const carol = await createUser(t.db, { username: 'carol' });
    await addUserKey(await createToken(t.db, carol), 'carol');
    const block = await t.request({ method: 'POST', url: `/api/v4/users/${carol.id}/block`, token: ROOT_TOKEN });
    assert.equal(block.statusCode, 201, block.body);
    const blocked = await git('carol', ['ls-remote', url()]);
    assert.notEqual(blocked.code, 0);
    assert.match(blocked.stderr, /Your account has been blocked\./);

    const dave = await createUser(t.db, { username: 'dave' });
    const daveKey = await addUserKey(await createToken(t.db, dave), 'dave');
    await t.db.updateTable('keys').set({ expires_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', daveKey.id).execute();
    const expired = await git('dave', ['ls-remote', url()]);
    assert.notEqual(expired.code, 0);
    assert.match(expired.stderr, /Your SSH key has expired\./);
  });

  it('runs no shell and no other command, and forwards nothing', async () => {
    const shell = await ssh('alice', []);
    assert.equal(shell.code, 0);
    assert.match(shell.stdout, /Welcome to kiln, @alice!/);
    const other = await ssh('alice', ['ls', '-la']);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /Disallowed command/);
    const injected = await ssh('alice', ['git-upload-pack', `'${project.path_with_namespace}.git'; ls`]);
    assert.notEqual(injected.code, 0);
    const forward = await run('ssh', [
      ...sshOptions(keys.alice.file, port), '-o', 'ExitOnForwardFailure=yes', '-N', '-L', '0:127.0.0.1:22', 'git@127.0.0.1',
    ], dir);
    assert.notEqual(forward.code, 0);
  });

  it('lets a deploy key clone, and push only with can_push', async () => {
    const k = await makeKey('deploy');
    const added = await t.request({
      method: 'POST', url: `/api/v4/projects/${project.id}/deploy_keys`, token: aliceToken, payload: { title: 'deploy', key: k.pub },
    });
    assert.equal(added.statusCode, 201, added.body);
    assert.equal(added.json().can_push, false);
    const keyId = added.json().id as number;
    const clone = await git('deploy', ['clone', '--quiet', url(), 'clone-deploy']);
    assert.equal(clone.code, 0, clone.stderr);
    const sha = await commitIn('clone-deploy', 'deploy.txt', 'deployed\n');
    const refused = await git('deploy', ['push', '--quiet', 'origin', 'HEAD'], path.join(dir, 'clone-deploy'));
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /This deploy key does not have write access to this project\./);

    const update = await t.request({
      method: 'PUT', url: `/api/v4/projects/${project.id}/deploy_keys/${keyId}`, token: aliceToken, payload: { can_push: true },
    });
    assert.equal(update.statusCode, 200, update.body);
    assert.equal(update.json().can_push, true);
    const pushed = await git('deploy', ['push', '--quiet', 'origin', 'HEAD'], path.join(dir, 'clone-deploy'));
    assert.equal(pushed.code, 0, pushed.stderr);
    const branch = await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/repository/branches/main`, token: aliceToken });
    assert.equal(branch.json().commit.id, sha);

    // Another project the key is not enabled on stays out of reach.
    const other = await t.request({ method: 'POST', url: '/api/v4/projects', token: aliceToken, payload: { name: 'other', initialize_with_readme: true } });
    const elsewhere = await git('deploy', ['ls-remote', `ssh://git@127.0.0.1:${port}/${other.json().path_with_namespace}.git`]);
    assert.notEqual(elsewhere.code, 0);
    assert.match(elsewhere.stderr, /could not be found/);
  });

  it('refuses SSH when the instance allows git over HTTP only', async () => {
    const set = (value: string) => t.request({
      method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { enabled_git_access_protocol: value },
    });
    assert.equal((await set('http')).statusCode, 200);
    const r = await git('alice', ['ls-remote', url()]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Git access over SSH is not allowed/);
    assert.equal((await set('nil')).statusCode, 200);
    assert.equal((await git('alice', ['ls-remote', url()])).code, 0);
  });

  it('refuses a key the key restrictions now forbid, with the reason', async () => {
    const restrict = (value: number) => t.request({
      method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { ed25519_key_restriction: value },
    });
    assert.equal((await restrict(-1)).statusCode, 200);
    const r = await git('alice', ['ls-remote', url()]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Your SSH key type is forbidden\. Must be /);
    assert.equal((await restrict(0)).statusCode, 200);
    assert.equal((await git('alice', ['ls-remote', url()])).code, 0);
  });

  it('points ssh_url_to_repo at KILN_SSH_PORT', async () => {
    assert.equal(project.ssh_url_to_repo, `ssh://git@kiln.test:2222/${project.path_with_namespace}.git`);
  });
});

