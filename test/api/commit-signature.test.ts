/**
 * A commit's GPG signature (issue 30, item 4; GET …/commits/:sha/signature of the Service 15.2,
 * Gitlab::Gpg::Commit, python-gitlab's test_commit_signature): real keys made with gpg --batch in
 * a temporary home, real commits signed by git with them, checked against the keys users stored:
 * verified, same_user_different_email, other_user, unverified (a signature that does not match),
 * unverified_key, unknown_key, a signing subkey, and 404 for an unsigned commit.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createPeople, createProject, type People } from '../helpers/noteables.ts';
import { nowIso } from '../../src/domain/clock.ts';

describe('commit signature API', () => {
  let t: TestApp;
  let people: People;
  let project: number;
  let gnupgHome: string;
  let gitDir: string;
  const keys: Record<string, { fpr: string; armored: string; subkeyFpr?: string }> = {};

  const gpg = (...args: string[]) => execFileSync('gpg', ['--batch', '--homedir', gnupgHome, ...args], {
    encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'],
  });
  const git = (args: string[], env: Record<string, string> = {}, input?: string) => execFileSync('git', ['--git-dir', gitDir, ...args], {
    encoding: 'utf8', input,
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: gnupgHome, GNUPGHOME: gnupgHome, ...env },
  }).trim();

  const makeKey = (name: string, email: string, withSubkey = false) => {
    gpg('--passphrase', '', '--quick-gen-key', `${name} <${email}>`, 'ed25519', withSubkey ? 'cert' : 'sign', 'never');
    const fpr = /^fpr:+([0-9A-F]{40}):/m.exec(gpg('--with-colons', '--list-keys', email))![1];
    let subkeyFpr: string | undefined;
    if (withSubkey) {
      gpg('--passphrase', '', '--quick-add-key', fpr, 'ed25519', 'sign', 'never');
      subkeyFpr = [...gpg('--with-colons', '--list-keys', email).matchAll(/^fpr:+([0-9A-F]{40}):/mg)][1][1];
    }
    keys[email] = { fpr, armored: gpg('--armor', '--export', fpr).trim(), subkeyFpr };
  };

  /** A commit on main signed with `signingKey` and committed as `committerEmail`. */
  const signedCommit = (signingKey: string | null, committerEmail: string, message: string) => {
    const tip = git(['rev-parse', 'refs/heads/main']);
    const tree = git(['rev-parse', `${tip}^{tree}`]);
    const sign = signingKey ? ['-c', 'gpg.program=gpg', '-c', `user.signingkey=${signingKey}`] : [];
    const sha = execFileSync('git', ['--git-dir', gitDir, ...sign, 'commit-tree', ...(signingKey ? ['-S'] : []), '-p', tip, '-m', message, tree], {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: gnupgHome, GNUPGHOME: gnupgHome,
        GIT_AUTHOR_NAME: 'Signer', GIT_AUTHOR_EMAIL: committerEmail, GIT_COMMITTER_NAME: 'Signer', GIT_COMMITTER_EMAIL: committerEmail,
      },
    }).trim();
    git(['update-ref', 'refs/heads/main', sha, tip]);
    return sha;
  };

  const signature = (sha: string, token = people.tokens.reporter) =>
    t.request({ url: `/api/v4/projects/${project}/repository/commits/${sha}/signature`, token });

  let signer: { id: number; token: string };
  let signerKeyId: number;

  before(async () => {
    t = await startTestApp();
    people = await createPeople(t);
    project = await createProject(t, people);
    const first = await t.request({
      method: 'POST', url: `/api/v4/projects/${project}/repository/commits`, token: people.tokens.owner,
      payload: { branch: 'main', commit_message: 'first', actions: [{ action: 'create', file_path: 'a.txt', content: 'a' }] },
    });
    assert.equal(first.statusCode, 201, first.body);
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', project).executeTakeFirstOrThrow();
    gitDir = path.join(t.dataDir, 'repositories', row.disk_path);
    gnupgHome = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-gnupg-'));
    await fs.chmod(gnupgHome, 0o700);
    makeKey('Signer', 'signer@example.com', true);
    makeKey('Stranger', 'stranger@example.com');
    makeKey('Unverified', 'unverified@example.com');
    const user = await createUser(t.db, { email: 'signer@example.com', name: 'Signer' });
    signer = { id: user.id, token: await createToken(t.db, user) };
    await t.db.insertInto('emails').values({
      user_id: user.id, email: 'signer-other@example.com', confirmed_at: null, created_at: nowIso(), updated_at: nowIso(),
    }).execute();
    const add = await t.request({ method: 'POST', url: '/api/v4/user/gpg_keys', token: signer.token, payload: { key: keys['signer@example.com'].armored } });
    assert.equal(add.statusCode, 201, add.body);
    signerKeyId = add.json().id;
    // A key whose address is none of its owner's.
    const owner = await createUser(t.db);
    const other = await t.request({
      method: 'POST', url: '/api/v4/user/gpg_keys', token: await createToken(t.db, owner), payload: { key: keys['unverified@example.com'].armored },
    });
    assert.equal(other.statusCode, 201, other.body);
  });
  after(async () => {
    await t.close();
    // The agent gpg started for this home ends with it.
    execFileSync('gpgconf', ['--homedir', gnupgHome, '--kill', 'gpg-agent']);
    await fs.rm(gnupgHome, { recursive: true, force: true });
  });

  it('verifies a commit signed by its committer\'s key, with a subkey', async () => {
    const sha = signedCommit(`${keys['signer@example.com'].subkeyFpr!}!`, 'signer@example.com', 'signed');
    const res = await signature(sha);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body), [
      'signature_type', 'verification_status', 'gpg_key_id', 'gpg_key_primary_keyid', 'gpg_key_user_name', 'gpg_key_user_email',
      'gpg_key_subkey_id', 'commit_source',
    ]);
    const subkey = await t.db.selectFrom('gpg_key_subkeys').selectAll().where('gpg_key_id', '=', signerKeyId).executeTakeFirstOrThrow();
    assert.deepEqual(body, {
      signature_type: 'PGP', verification_status: 'verified', gpg_key_id: signerKeyId,
      gpg_key_primary_keyid: keys['signer@example.com'].subkeyFpr!.slice(-16), gpg_key_user_name: 'Signer',
      gpg_key_user_email: 'signer@example.com', gpg_key_subkey_id: subkey.id, commit_source: 'gitaly',
    });
    assert.equal(subkey.fingerprint, keys['signer@example.com'].subkeyFpr);
  });

  it('tells another address of the same user, another person, and a changed commit apart', async () => {
    const subkey = `${keys['signer@example.com'].subkeyFpr!}!`;
    const same = signedCommit(subkey, 'signer-other@example.com', 'other address');
    assert.equal((await signature(same)).json().verification_status, 'same_user_different_email');
    const other = signedCommit(subkey, 'someone@example.com', 'someone else');
    assert.equal((await signature(other)).json().verification_status, 'other_user');
    // The same signature over a changed message no longer verifies.
    const raw = git(['cat-file', 'commit', other]);
    const forged = git(['hash-object', '-t', 'commit', '-w', '--stdin'], {}, raw.replace('someone else', 'forged') + '\n');
    const res = (await signature(forged)).json();
    assert.equal(res.verification_status, 'unverified');
    assert.equal(res.gpg_key_id, signerKeyId);
  });

  it('reports keys nobody stored and keys whose address is not their owner\'s', async () => {
    const unknown = signedCommit(keys['stranger@example.com'].fpr, 'stranger@example.com', 'stranger');
    assert.deepEqual((await signature(unknown)).json(), {
      signature_type: 'PGP', verification_status: 'unknown_key', gpg_key_id: null, gpg_key_primary_keyid: keys['stranger@example.com'].fpr,
      gpg_key_user_name: null, gpg_key_user_email: null, gpg_key_subkey_id: null, commit_source: 'gitaly',
    });
    const unverified = signedCommit(keys['unverified@example.com'].fpr, 'unverified@example.com', 'unverified key');
    const res = (await signature(unverified)).json();
    assert.equal(res.verification_status, 'unverified_key');
    assert.equal(res.gpg_key_user_email, 'unverified@example.com');
    assert.equal(res.gpg_key_primary_keyid, keys['unverified@example.com'].fpr.slice(-16));
  });

  it('answers 404 for an unsigned or missing commit and for callers who may not read the code', async () => {
    const unsigned = signedCommit(null, 'signer@example.com', 'unsigned');
    assert.deepEqual((await signature(unsigned)).json(), { message: '404 Signature Not Found' });
    assert.deepEqual((await signature('f'.repeat(40))).json(), { message: '404 Commit Not Found' });
    assert.equal((await signature(unsigned, people.tokens.nonMember)).statusCode, 404);
    assert.equal((await signature(unsigned, people.tokens.guest)).statusCode, 403);
  });
});
