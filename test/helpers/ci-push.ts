/**
 * Pushes over HTTP with the real git CLI into a listening kiln (the path a user's `git push`
 * takes, so push pipelines start as they do for users), and waits for pipelines that a push
 * creates in the background.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { TestApp } from './app.ts';
import type { CiProject } from './ci.ts';
import { cloneUrl, git, tempDir } from './git.ts';

export interface PushClone {
  dir: string;
  /** Writes files, commits them and pushes `refspecs` (default: HEAD to the branch); returns the commit id. */
  commitAndPush(files: Record<string, string>, o?: { message?: string; branch?: string; pushArgs?: string[] }): Promise<string>;
  run(args: string[]): Promise<string>;
  remove(): Promise<void>;
}

export async function pushClone(baseUrl: string, p: CiProject): Promise<PushClone> {
  const dir = await tempDir('kiln-ci-push-');
  const url = cloneUrl(baseUrl, p.fullPath, { username: p.owner.username, password: p.ownerToken });
  const run = async (args: string[]) => {
    const r = await git(args, dir);
    assert.equal(r.code, 0, `git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  await run(['init', '--quiet', '--initial-branch=main']);
  await run(['remote', 'add', 'origin', url]);
  return {
    dir,
    run,
    async commitAndPush(files, o = {}) {
      const branch = o.branch ?? 'main';
      for (const [name, content] of Object.entries(files)) {
        await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
        if (content === '') await fs.rm(path.join(dir, name), { force: true });
        else await fs.writeFile(path.join(dir, name), content);
      }
      await run(['add', '--all']);
      await run(['commit', '--quiet', '--allow-empty', '-m', o.message ?? 'Change things']);
      await run(['push', '--quiet', ...(o.pushArgs ?? []), 'origin', `HEAD:refs/heads/${branch}`]);
      return run(['rev-parse', 'HEAD']);
    },
    remove: () => fs.rm(dir, { recursive: true, force: true }),
  };
}

export interface ListedPipeline { id: number; sha: string; ref: string; status: string; source: string }

/** The project's pipelines once there are at least `count` (push pipelines start after the push answers). */
export async function waitForPipelines(t: TestApp, p: CiProject, count: number, timeoutMs = 15_000): Promise<ListedPipeline[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${p.project.id}/pipelines?per_page=100&sort=asc`, token: p.ownerToken });
    const list = res.json() as ListedPipeline[];
    if (list.length >= count) return list;
    if (Date.now() > deadline) assert.fail(`expected ${count} pipelines, have ${list.length}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
