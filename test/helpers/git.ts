/**
 * The real `git` CLI against a listening kiln: a free port chosen first so KILN_EXTERNAL_URL can
 * name it, and git run asynchronously (the server answers in this same process, so a
 * synchronous child would deadlock it).
 */
import { execFile } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from './app.ts';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

/** A kiln listening on 127.0.0.1 whose KILN_EXTERNAL_URL is its own address. */
export async function startListeningApp(env: Record<string, string> = {}): Promise<TestApp & { baseUrl: string }> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const t = await startTestApp({ KILN_EXTERNAL_URL: baseUrl, ...env });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { ...t, baseUrl };
}

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs git with no user config, no prompts, and a fixed identity. Never throws on exit codes. */
export function git(args: string[], cwd: string): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile('git', args, {
      cwd,
      env: {
        PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0',
        GIT_AUTHOR_NAME: 'Tester', GIT_AUTHOR_EMAIL: 'tester@example.com', GIT_COMMITTER_NAME: 'Tester', GIT_COMMITTER_EMAIL: 'tester@example.com',
        LANG: 'C',
      },
    }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

export async function tempDir(prefix = 'kiln-git-'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

/** `http://user:token@host/path.git` for a repository of the listening app. */
export function cloneUrl(baseUrl: string, fullPath: string, credentials?: { username: string; password: string }): string {
  const url = new URL(`${baseUrl}/${fullPath}.git`);
  if (credentials) {
    url.username = encodeURIComponent(credentials.username);
    url.password = encodeURIComponent(credentials.password);
  }
  return url.toString();
}
