/**
 * Repositories in a backup: which ones the database's cut names, their refs at the cut, a bundle
 * of exactly those refs, and a repository made again from it on restore.
 *
 * The bundle is written by hand rather than by `git bundle create`, which would bundle the refs as
 * they are when it runs, not as they were recorded: a v2 bundle is its header (`# v2 git bundle`,
 * one `<sha> <ref>` line a ref, an empty line) followed by a pack (gitformat-bundle), here the
 * pack of every object the recorded objects reach (`pack-objects --revs`). pack-objects reads
 * through git alternates, so a fork, whose objects are mostly its source's, is bundled whole and
 * restored self-contained.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { StorageShard } from '../config/schema.ts';
import { runGit } from '../domain/repositories/git-command.ts';
import { createBareRepository, repositoryExists } from '../domain/repositories/repositories.ts';
import { repositoryPath } from '../domain/repositories/storage.ts';
import { WIKI_DIR } from '../domain/wikis/wiki-repository.ts';
import { persistentRefPipelineId } from '../domain/pipelines/persistent-ref.ts';
import { PIPELINE_COMPLETED } from '../domain/pipelines/composite-status.ts';
import { BackupError, type RepositoryEntry, type RepositoryKind } from './format.ts';
import type { Snapshot } from './database-snapshot.ts';

interface Place { kind: RepositoryKind; id: number; storage: string; diskPath: string }

/** Every repository the snapshot's rows name, in an order that makes a project before its wiki. */
export async function repositoriesAtCut(snapshot: Snapshot): Promise<Place[]> {
  const places: Place[] = [];
  const projects = await snapshot.query<{ id: number; repository_storage: string; disk_path: string }>(
    'select id, repository_storage, disk_path from projects order by id',
  );
  for (const p of projects) {
    places.push({ kind: 'project', id: Number(p.id), storage: p.repository_storage, diskPath: p.disk_path });
    places.push({ kind: 'wiki', id: Number(p.id), storage: p.repository_storage, diskPath: `${p.disk_path}/${WIKI_DIR}` });
  }
  const snippets = await snapshot.query<{ id: number; repository_storage: string; disk_path: string }>(
    "select id, repository_storage, disk_path from snippets where disk_path <> '' order by id",
  );
  for (const s of snippets) places.push({ kind: 'snippet', id: Number(s.id), storage: s.repository_storage, diskPath: s.disk_path });
  const groups = await snapshot.query<{ id: number; repository_storage: string | null; wiki_disk_path: string }>(
    "select id, repository_storage, wiki_disk_path from namespaces where kind = 'group' and wiki_disk_path is not null order by id",
  );
  for (const g of groups) {
    places.push({ kind: 'group_wiki', id: Number(g.id), storage: g.repository_storage ?? 'default', diskPath: g.wiki_disk_path });
  }
  return places;
}

/**
 * The pipelines whose persistent refs (refs/pipelines/<id>) a backup keeps: those not completed at
 * the cut. The Service deletes a pipeline's ref when the pipeline completes (src/domain/pipelines/
 * persistent-ref.ts), so a ref of a completed or deleted pipeline (one whose deletion failed, say
 * while its repository was read-only for a storage move) is stale and stays out of the backup.
 */
export async function livePipelinesAtCut(snapshot: Snapshot): Promise<Set<number>> {
  const rows = await snapshot.query<{ id: number }>(
    `select id from ci_pipelines where status not in (${PIPELINE_COMPLETED.map((s) => `'${s}'`).join(', ')})`,
  );
  return new Set(rows.map((r) => Number(r.id)));
}

/**
 * Each existing repository's refs and HEAD as they are now (called under the fence), without the
 * persistent refs of pipelines not in `livePipelines`.
 */
export async function recordRefs(shards: StorageShard[], places: Place[], livePipelines: Set<number>): Promise<RepositoryEntry[]> {
  const out: RepositoryEntry[] = [];
  for (const place of places) {
    let gitDir: string;
    try {
      gitDir = repositoryPath(shards, place.storage, place.diskPath);
    } catch {
      throw new BackupError(`repository storage "${place.storage}" of ${place.kind} ${place.id} is not configured (KILN_STORAGES)`);
    }
    if (!(await repositoryExists(gitDir))) continue;
    const { stdout } = await runGit(['for-each-ref', '--format=%(refname) %(objectname)'], { gitDir });
    const refs = stdout.split('\n').filter(Boolean).map((line) => line.split(' ') as [string, string]).filter(([ref]) => {
      const pipelineId = persistentRefPipelineId(ref);
      return pipelineId === null || livePipelines.has(pipelineId);
    });
    const head = await runGit(['symbolic-ref', '-q', 'HEAD'], { gitDir, okExitCodes: [1, 128] });
    out.push({ ...place, head: head.exitCode === 0 ? head.stdout.trim() : null, refs, bundle: null });
  }
  return out;
}

/** Writes the bundle of `entry`'s recorded refs to `file`. */
export async function writeBundle(shards: StorageShard[], entry: RepositoryEntry, file: string): Promise<void> {
  const gitDir = repositoryPath(shards, entry.storage, entry.diskPath);
  const header = `# v2 git bundle\n${entry.refs.map(([ref, sha]) => `${sha} ${ref}\n`).join('')}\n`;
  await fsp.writeFile(file, header);
  const child = spawn('git', ['--git-dir', gitDir, 'pack-objects', '--stdout', '--revs', '--quiet', '--delta-base-offset'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
    },
  });
  const stderr: Buffer[] = [];
  child.stderr.on('data', (b: Buffer) => stderr.push(b));
  const exited = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
  });
  child.stdin.end(`${[...new Set(entry.refs.map(([, sha]) => sha))].join('\n')}\n`);
  await pipeline(child.stdout, fs.createWriteStream(file, { flags: 'a' }));
  const code = await exited;
  if (code !== 0) {
    throw new BackupError(`bundling ${entry.kind} ${entry.id} (${entry.diskPath}) failed: ${Buffer.concat(stderr).toString('utf8').trim()}`);
  }
}

/**
 * Makes the repository of `entry` again from its bundle (or empty, when it had no refs). Its git
 * configuration is git's default, as kiln makes every repository: the one setting kiln adds
 * (gc.pruneExpire of a repository forks borrow from) has no use in a self-contained restore, and
 * configuration read from an archive could name programs for git to run.
 */
export async function restoreRepository(shards: StorageShard[], entry: RepositoryEntry, bundleFile: string | null): Promise<void> {
  let gitDir: string;
  try {
    gitDir = repositoryPath(shards, entry.storage, entry.diskPath);
  } catch {
    throw new BackupError(`the backup has repositories on storage "${entry.storage}", which KILN_STORAGES does not name`);
  }
  await createBareRepository(gitDir);
  if (bundleFile) {
    await runGit(['fetch', '--quiet', '--no-write-fetch-head', bundleFile, '+refs/*:refs/*'], { gitDir });
  }
  if (entry.head) await runGit(['symbolic-ref', 'HEAD', entry.head], { gitDir });
}
