/**
 * python-gitlab 3.12 (Debian's python3-gitlab, installed by .ci/run) runs
 * test/clients/python/users_flow.py against a listening kiln (reference clients.md §1.2): gl.auth(),
 * creating users, listing them by following Link page after page, block/unblock literals, an SSH
 * key and emails, sudo as a query parameter, an impersonation token and deletion. The script exits
 * non-zero on any mismatch; here its JSON report is checked against the database.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { sshFingerprints, sshPublicKey } from '../helpers/keys.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';

/** Debian's interpreter, where python3-gitlab lives (a pyenv python3 may come first on PATH). */
const PYTHON = '/usr/bin/python3';
const SCRIPT = new URL('./python/users_flow.py', import.meta.url).pathname;

interface FlowReport {
  version: string;
  me: { id: number; username: string };
  created: number[];
  listed_all: number[];
  iterator: { total: number; total_pages: number };
  block_unblock: (boolean | null)[];
  key: { id: number; title: string; md5: string; sha256: string };
  emails: string[];
  sudo: { id: number; emails: number; keys: number };
  impersonation: { id: number; user_id: number };
  deleted: number[];
  left: number;
}

/** Runs the script without blocking the event loop (the kiln answering it lives in this process). */
function runFlow(url: string, token: string, sshKey: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, [SCRIPT, url, token], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SSH_PUBLIC_KEY: sshKey, PYTHONDONTWRITEBYTECODE: '1' },
      timeout: 120_000,
      maxBuffer: 10 * 1024 * 1024,
    }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('python-gitlab 3.12', () => {
  let t: ListeningTestApp;

  before(async () => { t = await startListeningApp(); });
  after(async () => { await t.close(); });

  it('runs the users flow script to the end', async () => {
    const sshKey = sshPublicKey('ed25519', 'py@laptop');
    const run = await runFlow(t.url, ROOT_TOKEN, sshKey);
    assert.equal(run.code, 0, `users_flow.py failed:\n${run.stderr}\n${run.stdout}`);
    const report = JSON.parse(run.stdout.trim()) as FlowReport;

    assert.equal(report.version, '3.12.0');
    assert.deepEqual(report.me, { id: 1, username: 'root' });

    assert.equal(report.created.length, 22);
    const rows = await t.db.selectFrom('users').select(['id', 'user_type']).orderBy('id', 'desc').execute();
    // Deleting moved the users' contributions to the ghost user (user_type 5), made on first use.
    const ghost = rows.filter((r) => r.user_type === 5);
    assert.equal(ghost.length, 1);
    assert.ok(!report.listed_all.includes(ghost[0]!.id));
    const all = rows.filter((r) => r.user_type !== 5).map((r) => r.id);
    const createdRows = await t.db.selectFrom('users').select(['id', 'username', 'confirmed_at'])
      .where('id', 'in', report.created).orderBy('id').execute();
    // Two of them were deleted at the end of the script.
    assert.deepEqual(createdRows.map((r) => r.id), report.created.filter((id) => !report.deleted.includes(id)));
    assert.ok(createdRows.every((r) => r.username.startsWith('py_user_') && r.confirmed_at !== null));
    // The full list seen before the deletions: today's users plus the two deleted, newest first.
    assert.deepEqual(report.listed_all, [...all, ...report.deleted].sort((a, b) => b - a));
    assert.deepEqual(report.iterator, { total: report.listed_all.length, total_pages: Math.ceil(report.listed_all.length / 5) });
    assert.ok(report.iterator.total_pages > 4, 'more than four pages of 5');

    assert.deepEqual(report.block_unblock, [true, null, true, false]);
    const blocked = await t.db.selectFrom('users').select('state').where('id', '=', report.created[0]!).executeTakeFirstOrThrow();
    assert.equal(blocked.state, 'active');

    const key = await t.db.selectFrom('keys').selectAll().where('id', '=', report.key.id).executeTakeFirstOrThrow();
    assert.equal(key.user_id, report.created[0]);
    assert.equal(key.title, 'py key');
    const fp = sshFingerprints(sshKey);
    assert.equal(report.key.md5.replaceAll(':', ''), fp.md5.replaceAll(':', ''));
    assert.equal(report.key.sha256, fp.sha256);
    assert.equal(key.fingerprint, report.key.md5);

    const emails = await t.db.selectFrom('emails').select(['email', 'confirmed_at']).where('user_id', '=', report.created[0]!).orderBy('email').execute();
    assert.deepEqual(emails.map((e) => e.email), ['py.second@example.com', 'py.third@example.com']);
    assert.equal(emails[0]!.confirmed_at, null);
    assert.ok(emails[1]!.confirmed_at);
    assert.deepEqual(report.emails, ['py.second@example.com', 'py.third@example.com']);
    assert.deepEqual(report.sudo, { id: report.created[0], emails: 2, keys: 1 });

    const token = await t.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', report.impersonation.id).executeTakeFirstOrThrow();
    assert.equal(token.user_id, report.created[0]);
    assert.equal(token.impersonation, 1);
    assert.equal(token.revoked, 1);

    assert.equal(report.deleted.length, 2);
    const gone = await t.db.selectFrom('users').select('id').where('id', 'in', report.deleted).execute();
    assert.deepEqual(gone, []);
    assert.equal(report.left, 20);
  });
});
