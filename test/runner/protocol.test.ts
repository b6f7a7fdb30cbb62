/**
 * The runner's side of the protocol against a scripted server (node:http), for what a real kiln
 * does not make happen on demand: log appends in bounded, contiguous Content-Range chunks with
 * the CRC32 checksum at the end, resuming where a 416 says the log ends, stopping on a 403 with
 * Job-Status, and the long-poll X-GitLab-Last-Update header sent back as last_update.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { JobTrace } from '../../src/runner/trace.ts';
import { requestJob } from '../../src/runner/api.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

describe('runner protocol client', () => {
  let server: http.Server;
  let base: string;
  const seen: Seen[] = [];
  let respond: (req: Seen, res: http.ServerResponse) => void = (_req, res) => res.writeHead(500).end();

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const s = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
        seen.push(s);
        respond(s, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('appends the log in contiguous chunks of at most 256 KB and ends with the CRC32 checksum', async () => {
    seen.length = 0;
    let stored = Buffer.alloc(0);
    respond = (req, res) => {
      const m = /^(\d+)-(\d+)$/.exec(String(req.headers['content-range']));
      assert.ok(m, 'Content-Range start-end');
      assert.equal(Number(m[1]), stored.length, 'each append starts where the log ends');
      assert.equal(Number(m[2]) - Number(m[1]) + 1, req.body.length, 'end is inclusive');
      assert.equal(req.headers['job-token'], 'job-token-1');
      stored = Buffer.concat([stored, req.body]);
      res.writeHead(202, { range: `0-${stored.length}`, 'job-status': 'running' }).end();
    };
    const trace = new JobTrace(base, 7, 'job-token-1', ['hidden-value']);
    const line = Buffer.from(`${'x'.repeat(1000)} hidden-value ü\n`);
    for (let i = 0; i < 700; i++) trace.write(line);
    assert.equal(await trace.finish(), true);
    const masked = Buffer.from(`${'x'.repeat(1000)} [MASKED] ü\n`.repeat(700));
    assert.ok(stored.equals(masked));
    assert.ok(seen.length >= 3 && seen.every((s) => s.method === 'PATCH' && s.url === '/api/v4/jobs/7/trace' && s.body.length <= 256 * 1024));
    assert.equal(trace.checksum, `crc32:${zlib.crc32(masked).toString(16).padStart(8, '0')}`);
    assert.equal(trace.bytesize, masked.length);
  });

  it('continues from where a 416 says the log ends', async () => {
    seen.length = 0;
    let stored = Buffer.from('abc');
    respond = (req, res) => {
      const start = Number(/^(\d+)-/.exec(String(req.headers['content-range']))![1]);
      if (start !== stored.length) {
        res.writeHead(416, { range: `0-${stored.length}` }).end();
        return;
      }
      stored = Buffer.concat([stored, req.body]);
      res.writeHead(202, { range: `0-${stored.length}` }).end();
    };
    // The server already has the first 3 bytes (an answer the runner never got).
    const trace = new JobTrace(base, 8, 't', []);
    trace.write('abcdef\n');
    assert.equal(await trace.finish(), true);
    assert.equal(stored.toString(), 'abcdef\n');
    assert.deepEqual(seen.map((s) => s.headers['content-range']), ['0-6', '3-6']);
  });

  it('stops when the server answers 403 with the job status (canceled)', async () => {
    respond = (_req, res) => res.writeHead(403, { 'job-status': 'canceled' }).end('{"message":"403 Forbidden - Job is not running"}');
    const trace = new JobTrace(base, 9, 't', []);
    trace.write('output\n');
    await trace.finish();
    assert.equal(trace.aborted.signal.aborted, true);
    assert.equal(trace.abortedStatus, 'canceled');
  });

  it('sends X-GitLab-Last-Update back as last_update', async () => {
    seen.length = 0;
    respond = (_req, res) => res.writeHead(204, { 'x-gitlab-last-update': 'abc123' }).end();
    const first = await requestJob(base, 'runner-token', 'shell', null);
    assert.deepEqual(first, { job: null, lastUpdate: 'abc123' });
    await requestJob(base, 'runner-token', 'shell', first.lastUpdate);
    const bodies = seen.map((s) => JSON.parse(s.body.toString()) as { token: string; last_update?: string; info: { features: Record<string, boolean> } });
    assert.equal(bodies[0].last_update, undefined);
    assert.equal(bodies[1].last_update, 'abc123');
    assert.equal(bodies[1].token, 'runner-token');
    assert.equal(bodies[1].info.features.trace_checksum, true);
    assert.equal(bodies[1].info.features.cancelable, true);
  });
});
