/**
 * `kiln doctor` (issue 34, item 6): looks at what a kiln instance needs before it serves and
 * says, for each thing, whether it is fine and what to do when it is not. It changes nothing:
 * it opens no SQLite file that does not exist yet, creates no table, and leaves a probe file in a
 * storage only for the moment it takes to write and remove it.
 *
 * Exit code: 0 when nothing failed (warnings allowed), 1 when something must be fixed — a
 * configuration kiln cannot read included (main.ts prints ConfigError's message).
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql, type Kysely } from 'kysely';
import type { Config } from './config/schema.ts';
import { openDatabase } from './db/database.ts';
import { MigrationChecksumError, migrationChecksums } from './db/migrate.ts';

const run = promisify(execFile);

export type Verdict = 'ok' | 'warn' | 'fail';

export interface Finding {
  check: string;
  verdict: Verdict;
  detail: string;
  /** What to do about it, for warn and fail. */
  fix?: string;
}

/** git merge-tree --write-tree (conflict checks, cherry-picks, reverts) came with git 2.38. */
const MIN_GIT: [number, number] = [2, 38];
/** Below this much free space a storage is reported (a warning; full is a failure). */
const LOW_SPACE_BYTES = 1024 ** 3;
/** Clock skew against the database beyond which timestamps written by kiln and by SQL disagree visibly. */
const MAX_SKEW_MS = 2_000;
const NETWORK_TIMEOUT_MS = 3_000;

export async function diagnose(config: Config): Promise<Finding[]> {
  const findings: Finding[] = [{ check: 'configuration', verdict: 'ok', detail: `external URL ${config.externalUrl}, data in ${config.dataDir}` }];
  if (!config.externalUrl.startsWith('https:') && !/^http:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(`${config.externalUrl}/`)) {
    findings.push({
      check: 'configuration', verdict: 'warn', detail: `KILN_EXTERNAL_URL ${config.externalUrl} is plain HTTP on a non-loopback host`,
      fix: 'serve kiln behind TLS and set KILN_EXTERNAL_URL to its https:// address: tokens and passwords cross the network',
    });
  }
  findings.push(...await database(config));
  findings.push(await gitVersion());
  findings.push(await directory('data directory', config.dataDir));
  for (const shard of config.storages) findings.push(await directory(`storage ${shard.name}`, shard.path));
  if (config.redisUrl) findings.push(await redis(config.redisUrl));
  if (config.sshPort !== 0) findings.push(await sshPort(config.host, config.sshPort));
  return findings;
}

async function database(config: Config): Promise<Finding[]> {
  const where = config.databaseUrl ? `PostgreSQL at ${redactUrl(config.databaseUrl)}` : `SQLite ${path.join(config.dataDir, 'kiln.sqlite3')}`;
  if (!config.databaseUrl && !await exists(path.join(config.dataDir, 'kiln.sqlite3'))) {
    return [{ check: 'database', verdict: 'ok', detail: `${where} does not exist yet: the first start creates and migrates it` }];
  }
  const opened = openDatabase({ ...config });
  try {
    const started = Date.now();
    const now = await withTimeout(sql<{ now: string }>`select ${sql.raw(config.databaseUrl ? 'now()::text' : "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')")} as now`
      .execute(opened.db), NETWORK_TIMEOUT_MS);
    if (now === undefined) {
      return [{ check: 'database', verdict: 'fail', detail: `${where} did not answer within ${NETWORK_TIMEOUT_MS / 1000} s`, fix: 'start the database server or correct DATABASE_URL' }];
    }
    const answeredAt = Date.now();
    const out: Finding[] = [{ check: 'database', verdict: 'ok', detail: `${where} answers` }];
    out.push(await schema(opened.db));
    if (config.databaseUrl) {
      // The database's clock at the midpoint of the round trip against ours.
      const skew = Date.parse(now.rows[0].now.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00')) - (started + answeredAt) / 2;
      out.push(Math.abs(skew) <= MAX_SKEW_MS
        ? { check: 'clock', verdict: 'ok', detail: `within ${Math.max(1, Math.round(Math.abs(skew)))} ms of the database's` }
        : { check: 'clock', verdict: 'warn', detail: `${Math.round(skew / 1000)} s off the database's clock`, fix: 'run NTP (e.g. systemd-timesyncd or chrony) on both machines' });
    }
    return out;
  } catch (err) {
    return [{ check: 'database', verdict: 'fail', detail: `${where}: ${(err as Error).message}`, fix: 'start the database server, or correct DATABASE_URL and its credentials' }];
  } finally {
    await opened.close();
  }
}

/** Pending migrations and edited applied ones, read without writing anything. */
async function schema(db: Kysely<any>): Promise<Finding> {
  const sums = await migrationChecksums();
  let applied: string[];
  try {
    applied = (await db.selectFrom('kysely_migration').select('name').execute()).map((r: { name: string }) => r.name);
  } catch {
    return { check: 'schema', verdict: 'warn', detail: 'no migration has run', fix: 'run `kiln migrate` (or start kiln, which migrates)' };
  }
  let recorded = new Map<string, string>();
  try {
    recorded = new Map((await db.selectFrom('kiln_migration_checksums').select(['name', 'sha256']).execute())
      .map((r: { name: string; sha256: string }) => [r.name, r.sha256]));
  } catch {
    // A database from before checksums: the next boot records them.
  }
  const edited = applied.flatMap((name) => {
    const was = recorded.get(name);
    const now = sums.get(name);
    return was !== undefined && now !== undefined && was !== now ? [{ name, recorded: was, current: now }] : [];
  });
  if (edited.length > 0) {
    const detail = new MigrationChecksumError(edited).message;
    return { check: 'schema', verdict: 'fail', detail, fix: 'restore the migration files as released' };
  }
  const unknown = applied.filter((name) => !sums.has(name));
  if (unknown.length > 0) {
    return {
      check: 'schema', verdict: 'fail', detail: `the database ran migrations this kiln does not have (${unknown.slice(0, 3).join(', ')}): it was written by a newer kiln`,
      fix: 'run the kiln version that wrote it, or restore a backup made by this version',
    };
  }
  const pending = [...sums.keys()].filter((name) => !applied.includes(name));
  if (pending.length > 0) {
    return { check: 'schema', verdict: 'warn', detail: `${pending.length} migration(s) pending, from ${pending[0]}`, fix: 'run `kiln migrate` (start does it too)' };
  }
  return { check: 'schema', verdict: 'ok', detail: `up to date (${applied.length} migrations, checksums match)` };
}

async function gitVersion(): Promise<Finding> {
  try {
    const { stdout } = await run('git', ['--version'], { timeout: NETWORK_TIMEOUT_MS });
    const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(stdout);
    if (!m) return { check: 'git', verdict: 'fail', detail: `unrecognised version: ${stdout.trim()}`, fix: 'install git from your distribution' };
    const [major, minor] = [Number(m[1]), Number(m[2])];
    const ok = major > MIN_GIT[0] || (major === MIN_GIT[0] && minor >= MIN_GIT[1]);
    return ok
      ? { check: 'git', verdict: 'ok', detail: `git ${m[0]}` }
      : { check: 'git', verdict: 'fail', detail: `git ${m[0]} is older than ${MIN_GIT.join('.')}`, fix: `install git ${MIN_GIT.join('.')} or newer (merge checks use merge-tree --write-tree)` };
  } catch {
    return { check: 'git', verdict: 'fail', detail: 'git is not on PATH', fix: 'install git (Debian: apt-get install git)' };
  }
}

/** Writable (a probe file written and removed) and with room to grow. */
async function directory(check: string, dir: string): Promise<Finding> {
  if (!await exists(dir)) {
    // kiln creates it on start: the nearest existing ancestor must let it.
    let ancestor = path.dirname(dir);
    while (!await exists(ancestor) && path.dirname(ancestor) !== ancestor) ancestor = path.dirname(ancestor);
    const isDir = await fs.stat(ancestor).then((st) => st.isDirectory(), () => false);
    const writable = isDir && await fs.access(ancestor, fs.constants.W_OK).then(() => true, () => false);
    return writable
      ? { check, verdict: 'ok', detail: `${dir} does not exist yet: kiln creates it` }
      : { check, verdict: 'fail', detail: `${dir} does not exist and ${ancestor} is not writable`, fix: `create ${dir} for the user kiln runs as` };
  }
  const probe = path.join(dir, `.kiln-doctor-${crypto.randomBytes(6).toString('hex')}`);
  try {
    await fs.writeFile(probe, 'probe');
    await fs.rm(probe);
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return { check, verdict: 'fail', detail: `${dir} is not writable (${why})`, fix: `give the user kiln runs as write access to ${dir}` };
  }
  const stats = await fs.statfs(dir);
  const free = stats.bavail * stats.bsize;
  const share = stats.blocks > 0 ? stats.bavail / stats.blocks : 1;
  const detail = `${dir} writable, ${formatBytes(free)} free (${Math.round(share * 100)} %)`;
  if (free < LOW_SPACE_BYTES || share < 0.05) {
    return { check, verdict: 'warn', detail, fix: 'free space or move the data to a larger disk (repositories, artifacts and logs grow)' };
  }
  return { check, verdict: 'ok', detail };
}

async function redis(url: string): Promise<Finding> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: NETWORK_TIMEOUT_MS, retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    const pong = await withTimeout(client.ping(), NETWORK_TIMEOUT_MS);
    return pong === 'PONG'
      ? { check: 'redis', verdict: 'ok', detail: `${redactUrl(url)} answers` }
      : { check: 'redis', verdict: 'fail', detail: `${redactUrl(url)} did not answer PING`, fix: 'start Redis or correct KILN_REDIS_URL' };
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return { check: 'redis', verdict: 'fail', detail: `${redactUrl(url)} is not reachable (${why})`, fix: 'start Redis or correct KILN_REDIS_URL' };
  } finally {
    client.disconnect();
  }
}

/** Kiln's own SSH server answering there, or the port free for it. */
async function sshPort(host: string, port: number): Promise<Finding> {
  const check = 'ssh';
  const banner = await new Promise<string | null>((resolve) => {
    const socket = net.connect({ host, port, timeout: NETWORK_TIMEOUT_MS });
    let text = '';
    socket.on('data', (d) => { text += d.toString('latin1'); if (text.includes('\n')) { socket.destroy(); resolve(text); } });
    socket.on('timeout', () => { socket.destroy(); resolve(text); });
    socket.on('error', () => resolve(null));
    socket.on('close', () => resolve(text));
  });
  if (banner !== null) {
    return banner.startsWith('SSH-2.0-')
      ? { check, verdict: 'ok', detail: `${host}:${port} serves SSH (${banner.trim().slice(0, 60)})` }
      : {
        check, verdict: 'fail', detail: `${host}:${port} is taken by something that is not an SSH server`,
        fix: 'stop it, or set KILN_SSH_PORT to a free port (0 turns git over SSH off)',
      };
  }
  const free = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    const server = net.createServer();
    server.once('error', (err) => resolve(err));
    server.listen({ host, port }, () => server.close(() => resolve(null)));
  });
  if (free === null) return { check, verdict: 'ok', detail: `${host}:${port} is free for kiln's SSH server` };
  return {
    check, verdict: 'fail', detail: `kiln cannot listen on ${host}:${port} (${free.code})`,
    fix: free.code === 'EACCES'
      ? 'ports below 1024 need privileges: use a higher KILN_SSH_PORT and forward 22 to it' : 'choose another KILN_SSH_PORT',
  };
}

function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '****';
    return url.toString();
  } catch {
    return '(unparsable URL)';
  }
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(() => true, () => false);
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), ms); })]);
  } finally {
    clearTimeout(timer);
  }
}

function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

const MARK: Record<Verdict, string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };

/** The report as printed, and the exit code it calls for. */
export function report(findings: readonly Finding[]): { text: string; exitCode: number } {
  const lines = findings.map((f) => `${MARK[f.verdict]}  ${f.check.padEnd(20)} ${f.detail}${f.fix ? `\n      ${' '.repeat(20)} → ${f.fix}` : ''}`);
  const failed = findings.filter((f) => f.verdict === 'fail').length;
  const warned = findings.filter((f) => f.verdict === 'warn').length;
  if (failed > 0) lines.push(`${failed} problem(s) to fix${warned ? `, ${warned} warning(s)` : ''}`);
  else lines.push(warned > 0 ? `no problem, ${warned} warning(s)` : 'no problem found');
  return { text: lines.join('\n'), exitCode: failed > 0 ? 1 : 0 };
}
