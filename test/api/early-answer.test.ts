/**
 * An early answer (issue 13, item 7): a 416 on a log append sent before the body was read must
 * not leave a client that is still writing its body hanging. Over a real socket: a large rest
 * closes the connection, a small one is drained and the connection serves the next request.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, createPipeline, pushFiles } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner, type JobPayload } from '../helpers/test-runner.ts';
import { createToken, createUser } from '../helpers/factories.ts';

function connect(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Resolves with what the server sent once `predicate` holds for it. */
function readUntil(socket: net.Socket, predicate: (text: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (predicate(text)) {
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
  });
}

function head(job: JobPayload, length: number, range = '0-99999999999'): string {
  return `PATCH /api/v4/jobs/${job.id}/trace HTTP/1.1\r\nHost: kiln.test\r\nJob-Token: ${job.token}\r\n`
    + `Content-Range: ${range}\r\nContent-Type: text/plain\r\nContent-Length: ${length}\r\n\r\n`;
}

describe('early answers with a body still coming', () => {
  let t: ListeningTestApp;
  let job: JobPayload;
  before(async () => {
    t = await startListeningApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    const p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': 'build:\n  script: echo hi\n' });
    const runner = await TestRunner.register(t);
    await createPipeline(t, p);
    job = (await runner.request())!;
    assert.ok(job);
  });
  after(async () => {
    await t.app.close();
    await t.close();
  });

  for (const [range, when] of [['0-99999999999', 'before reading'], ['5-9', 'at a range that does not start where the log ends'], ['0-9', 'after reading part of it']] as const) {
  it(`closes the connection after a 416 ${when} when a large body is still being sent`, async () => {
    const length = 64 * 1024 * 1024;
    const socket = await connect(t.url);
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const answered = readUntil(socket, (s) => s.includes('\r\n\r\n'));
    socket.write(head(job, length, range));
    socket.write(Buffer.alloc(64 * 1024, 'x'));
    assert.match(await answered, /^HTTP\/1\.1 416 /);
    // Keep writing the rest, as a client that sends its whole body first does: the server must
    // not leave it waiting.
    const chunk = Buffer.alloc(1024 * 1024, 'y');
    const writeAll = (async () => {
      for (let sent = 64 * 1024; sent < length && !socket.destroyed; sent += chunk.length) {
        if (!socket.write(chunk)) await new Promise((resolve) => { socket.once('drain', resolve); socket.once('close', resolve); });
      }
    })();
    const outcome = await Promise.race([closed.then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('hung'), 15_000))]);
    assert.equal(outcome, 'closed');
    await writeAll;
  });
  }

  it('keeps the connection after answers sent before a bodiless request was marked complete', async () => {
    // GET /users/:id answers a remembered row synchronously, before Node has marked the request
    // complete: the connection must serve the requests after it (it was closed every time).
    const token = await createToken(t.db, await createUser(t.db));
    const socket = await connect(t.url);
    for (let i = 0; i < 3; i++) {
      const answer = readUntil(socket, (s) => /\r\n\r\n[\s\S]*\}/.test(s));
      socket.write(`GET /api/v4/users/1 HTTP/1.1\r\nHost: kiln.test\r\nPrivate-Token: ${token}\r\n\r\n`);
      const text = await answer;
      assert.match(text, /^HTTP\/1\.1 200 /);
      assert.doesNotMatch(text, /^connection: close/im, `request ${i + 1}`);
    }
    assert.equal(socket.destroyed, false);
    socket.destroy();
  });

  it('drains a small rest after a 416 and keeps the connection for the next request', async () => {
    const socket = await connect(t.url);
    const first = readUntil(socket, (s) => /\r\n\r\n[\s\S]*\}/.test(s));
    socket.write(head(job, 256 * 1024));
    socket.write(Buffer.alloc(1024, 'x'));
    assert.match(await first, /^HTTP\/1\.1 416 /);
    socket.write(Buffer.alloc(256 * 1024 - 1024, 'x'));
    const second = readUntil(socket, (s) => /\r\n\r\n[\s\S]*\}/.test(s));
    socket.write('GET /api/v4/version HTTP/1.1\r\nHost: kiln.test\r\n\r\n');
    assert.match(await second, /^HTTP\/1\.1 401 /);
    socket.destroy();
  });
});
