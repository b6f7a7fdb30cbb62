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

  async function makeKey(name: string) {
    const file = path.join(dir, name);
    const r = await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `${name}@example.com`, '-f', file], dir);
    assert.equal(r.code, 0, r.stderr);
    keys[name] = { file, pub: (await fs.readFile(`${file}.pub`, 'utf8')).trim() };
    return keys[name];
  }

  const git = (key: string, args: string[], cwd = dir) => run('git', args, cwd, {
    GIT_SSH_COMMAND: `ssh ${sshOptions(keys[key].file, port).join(' ')}`,
  });
  const ssh = (key: string, command: string[]) => run('ssh', [...sshOptions(keys[key].file, port), 'git@127.0.0.1', ...command], dir);
  const url = () => `ssh://git@127.0.0.1:${port}/${project.path_with_namespace}.git`;

  async function addUserKey(token: string, name: string) {
    const k = await makeKey(name);
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
});
