/**
 * Soak (issue 34, item 5): a mixed load for a chosen time against `kiln serve` started as its own
 * process, sampling the server over time, then a verdict. `.ci/run` runs it for 3 minutes on
 * SQLite and fails on a failed verdict.
 *
 *   node bench/soak.ts                     # 3 minutes (SOAK_SECONDS or the first argument: 900, 15m, 30m)
 *   node bench/soak.ts 30m
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/soak.ts 15m
 *
 * The load, all at once and paced so the two cores keep up (a soak looks for what grows, not for
 * the ceiling): API readers and writers (users, projects, issues, notes, labels, lists); git clones
 * and pushes over HTTP, each push starting a pipeline that `kiln runner` (shell executor, its own
 * process) fetches and runs; OAuth flows, in turn the password grant (token info, userinfo) and
 * the authorization code (signing in on the web page, the consent page approved, the code
 * exchanged, a refresh, signing out), each token then used on the API, revoked, and refused.
 *
 * Each interval (SOAK_INTERVAL seconds, default a twelfth of the run, 5 to 60) prints the server's
 * RSS and heap, its open descriptors (/proc/<pid>/fd, the fewest of a look every second: git's
 * pipes come and go), its event-loop delay (p99 and max over the interval, from prom-client's
 * nodejs_eventloop_lag_* at /-/metrics, which reset at each scrape), the requests answered, git
 * commands, errors, the p50/p99 latency of the HTTP requests, the server's CPU time per request
 * and the machine's load average (latency that grows while CPU per request does not is the
 * machine's other work, not kiln).
 *
 * Verdict, on what follows the warm-up (the first sixth of the run, at least 20 s), cut in thirds:
 *   - no error: every request answered as expected, every git command succeeded, every pipeline
 *     ended `success` (waited for after the load stops);
 *   - RSS and descriptors flat: the median of the last third's samples at most 10 % above the
 *     median of the first third's;
 *   - latency flat: the p99 of every request of the last third at most 1.5 times the first third's
 *     p99, or at most 10 ms above it (sub-millisecond p99s double on noise alone).
 * Exit code 0 when all hold, 1 otherwise.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchDatabase } from './bench-database.ts';
import { startKiln, type KilnProcess } from './kiln-process.ts';

const run = promisify(execFile);
const TOKEN = 'soak-root-token-0123456789';
const PASSWORD = 'soak-root-password-1234';
const REGISTRATION = 'soak-registration-token-0123';
const REDIRECT_URI = 'http://127.0.0.1/soak-callback';
const MAIN = path.join(import.meta.dirname, '..', 'src', 'main.ts');

function parseDuration(raw: string | undefined): number {
  if (!raw) return 180;
  const m = /^(\d+)(s|m|h)?$/.exec(raw.trim());
  if (!m) throw new Error(`a duration is seconds, or a number followed by s, m or h; got "${raw}"`);
  const n = Number(m[1]) * (m[2] === 'h' ? 3600 : m[2] === 'm' ? 60 : 1);
  if (n < 60 || n > 24 * 3600) throw new Error(`the duration must be between 60 s and 24 h; got ${n} s`);
  return n;
}

const DURATION_S = parseDuration(process.argv[2] ?? process.env.SOAK_SECONDS);
const INTERVAL_S = Number(process.env.SOAK_INTERVAL ?? Math.min(60, Math.max(5, Math.round(DURATION_S / 12))));
const WARMUP_S = Math.max(20, Math.round(DURATION_S / 6));

const gitEnv = (home: string) => ({
  PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', LANG: 'C',
  GIT_AUTHOR_NAME: 'soak', GIT_AUTHOR_EMAIL: 'soak@example.com', GIT_COMMITTER_NAME: 'soak', GIT_COMMITTER_EMAIL: 'soak@example.com',
});

/** What one interval saw; latencies in ms. */
interface Bucket {
  latencies: number[];
  requests: number;
  errors: number;
  gitOps: number;
}

interface HttpOptions {
  /** PRIVATE-TOKEN; root's unless given, none when null. */
  token?: string | null;
  bearer?: string;
  json?: unknown;
  form?: Record<string, string>;
  /** The statuses that are not errors (default: 2xx). */
  expect?: number[];
  /** A Cookie header (the web pages and OAuth consent); the answer is then {status, text, location, cookies}. */
  cookie?: string;
}

interface PageAnswer {
  status: number;
  text: string;
  location: string | null;
  /** name=value of each Set-Cookie. */
  cookies: string[];
}

const newBucket = (): Bucket => ({ latencies: [], requests: 0, errors: 0, gitOps: 0 });

interface Sample {
  at: number;
  rssMb: number;
  /** The fewest descriptors open at any of the interval's once-a-second looks. */
  fds: number;
  /** Server CPU time (user + system) per request answered in the interval. */
  cpuMsPerRequest: number;
  /** The machine's 1-minute load average: what else competed for the cores. */
  load: number;
  lagP99Ms: number;
  lagMaxMs: number;
  heapMb: number;
  bucket: Bucket;
}

const percentile = (sorted: number[], p: number): number => (
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
);
const median = (xs: number[]): number => percentile([...xs].sort((x, y) => x - y), 50);

class Load {
  bucket = newBucket();
  readonly errorSamples: string[] = [];
  totalErrors = 0;
  readonly base: string;

  constructor(base: string) {
    this.base = base;
  }

  error(what: string): void {
    this.bucket.errors += 1;
    this.totalErrors += 1;
    if (this.errorSamples.length < 10) this.errorSamples.push(what);
  }

  /** One HTTP request, timed; an answer other than `expect` counts as an error. */
  async http(method: string, url: string, o: HttpOptions = {}): Promise<any> {
    const headers: Record<string, string> = {};
    const token = o.token === undefined ? TOKEN : o.token;
    if (o.cookie !== undefined) headers.cookie = o.cookie;
    if (o.bearer) headers.authorization = `Bearer ${o.bearer}`;
    else if (token) headers['private-token'] = token;
    let body: string | undefined;
    if (o.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(o.json);
    } else if (o.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(o.form).toString();
    }
    const started = performance.now();
    try {
      const res = await fetch(`${this.base}${url}`, { method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(30_000) });
      const text = await res.text();
      this.bucket.latencies.push(performance.now() - started);
      this.bucket.requests += 1;
      const expect = o.expect ?? [200, 201, 202, 204];
      if (!expect.includes(res.status)) {
        this.error(`${method} ${url}: ${res.status} ${text.slice(0, 200)}`);
        return null;
      }
      if (o.cookie !== undefined) {
        const page: PageAnswer = {
          status: res.status, text, location: res.headers.get('location'), cookies: res.headers.getSetCookie().map((c) => c.split(';')[0]),
        };
        return page;
      }
      return text ? JSON.parse(text) : null;
    } catch (err) {
      this.bucket.requests += 1;
      this.error(`${method} ${url}: ${(err as Error).message}`);
      return null;
    }
  }

  async git(args: string[], cwd: string): Promise<boolean> {
    try {
      await run('git', args, { cwd, env: gitEnv(cwd), timeout: 60_000 });
      this.bucket.gitOps += 1;
      return true;
    } catch (err) {
      this.error(`git ${args[0]}: ${(err as Error).message.slice(0, 300)}`);
      return false;
    }
  }
}

async function readRss(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/**
 * Open descriptors. A request running git holds a few pipes for a moment, so one look is noise;
 * the fewest seen over an interval's looks is what stays open, which a leak raises.
 */
async function countFds(pid: number): Promise<number> {
  return (await fs.readdir(`/proc/${pid}/fd`)).length;
}

/** CPU time (user + system) a process has used so far, in ms (100 ticks a second). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** prom-client's event-loop figures (seconds) and heap, as this scrape's window saw them. */
async function scrape(base: string): Promise<{ lagP99Ms: number; lagMaxMs: number; heapMb: number }> {
  const text = await (await fetch(`${base}/-/metrics`, { headers: { 'private-token': TOKEN } })).text();
  const metric = (name: string): number => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    lagP99Ms: metric('nodejs_eventloop_lag_p99_seconds') * 1000,
    lagMaxMs: metric('nodejs_eventloop_lag_max_seconds') * 1000,
    heapMb: metric('nodejs_heap_size_used_bytes') / 1024 / 1024,
  };
}

async function main(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-soak-'));
  const database = await benchDatabase();
  let kiln: KilnProcess | null = null;
  let runner: ChildProcess | null = null;
  try {
    kiln = await startKiln({
      dataDir: path.join(dir, 'data'), databaseUrl: database.url, nodeFlags: ['--max-semi-space-size=16', '--expose-gc'],
      readyTimeoutMs: 180_000,
      env: { KILN_ROOT_TOKEN: TOKEN, KILN_ROOT_PASSWORD: PASSWORD, KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION, LOG_LEVEL: 'error' },
    });
    const pid = kiln.child.pid!;
    const load = new Load(kiln.base);
    const setup = async (method: string, url: string, json?: unknown) => {
      const r = await load.http(method, url, { json });
      if (!r) throw new Error(`set-up failed: ${load.errorSamples.join('; ')}`);
      return r;
    };

    // Set-up: a project with a CI configuration, a user, an OAuth application, a runner.
    const project = await setup('POST', '/api/v4/projects', { name: 'soak', visibility: 'private', initialize_with_readme: true });
    const ci = 'variables:\n  GIT_DEPTH: "1"\nbuild:\n  script:\n    - echo "soak $CI_COMMIT_SHORT_SHA"\n    - test -f README.md\n';
    await setup('POST', `/api/v4/projects/${project.id}/repository/files/.gitlab-ci.yml`, { branch: 'main', commit_message: 'CI', content: ci });
    const app = await setup('POST', '/api/v4/applications', { name: 'soak', redirect_uri: REDIRECT_URI, scopes: 'api read_user openid' });
    const runnerHome = path.join(dir, 'runner');
    await fs.mkdir(runnerHome);
    const runnerConfig = path.join(runnerHome, 'config.toml');
    await run(process.execPath, [
      MAIN, 'runner', 'register', '--url', kiln.base, '--registration-token', REGISTRATION, '--concurrent', '2', '--config', runnerConfig,
    ], { env: { PATH: process.env.PATH, HOME: runnerHome } });
    runner = spawn(process.execPath, [MAIN, 'runner', 'run', '--config', runnerConfig], {
      env: { PATH: process.env.PATH, HOME: runnerHome }, stdio: ['ignore', 'ignore', 'ignore'],
    });
    const pushUrl = new URL(`${kiln.base}/${project.path_with_namespace}.git`);
    pushUrl.username = 'root';
    pushUrl.password = TOKEN;
    const work = path.join(dir, 'work');
    await run('git', ['clone', '--quiet', pushUrl.toString(), work], { env: gitEnv(dir) });
    await run('git', ['-C', work, 'checkout', '--quiet', '-b', 'soak'], { env: gitEnv(dir) });

    const started = Date.now();
    const deadline = started + DURATION_S * 1000;
    const running = () => Date.now() < deadline;
    let seq = 0;

    const apiReader = async () => {
      while (running()) {
        await load.http('GET', '/api/v4/user');
        await load.http('GET', `/api/v4/projects/${project.id}`);
        await load.http('GET', '/api/v4/projects?per_page=20&order_by=id');
        await load.http('GET', `/api/v4/projects/${project.id}/issues?per_page=20`);
        await load.http('GET', `/api/v4/projects/${project.id}/pipelines?per_page=20`);
        await load.http('GET', `/api/v4/projects/${project.id}/repository/tree`);
        await load.http('GET', '/api/v4/users?per_page=20');
        await sleep(20);
      }
    };
    const apiWriter = async () => {
      while (running()) {
        seq += 1;
        const n = seq;
        const issue = await load.http('POST', `/api/v4/projects/${project.id}/issues`, {
          json: { title: `soak issue ${n}`, labels: `soak-${n % 7}` },
        });
        if (issue) {
          await load.http('POST', `/api/v4/projects/${project.id}/issues/${issue.iid}/notes`, { json: { body: `note on ${n}` } });
          await load.http('PUT', `/api/v4/projects/${project.id}/issues/${issue.iid}`, { json: { state_event: 'close', description: `closed ${n}` } });
          await load.http('GET', `/api/v4/projects/${project.id}/issues/${issue.iid}/notes`);
        }
        const user = await load.http('POST', '/api/v4/users', {
          json: {
            username: `soak-${process.pid}-${n}`, email: `soak-${n}@example.com`, name: `Soak ${n}`, password: 'soak-user-password-1234',
            skip_confirmation: true,
          },
        });
        if (user) {
          const pat = await load.http('POST', `/api/v4/users/${user.id}/personal_access_tokens`, { json: { name: 'soak', scopes: ['api'] } });
          if (pat) {
            await load.http('GET', '/api/v4/user', { token: pat.token });
            await load.http('DELETE', '/api/v4/personal_access_tokens/self', { token: pat.token });
            await load.http('GET', '/api/v4/user', { token: pat.token, expect: [401] });
          }
          await load.http('DELETE', `/api/v4/users/${user.id}?hard_delete=true`);
        }
        await sleep(100);
      }
    };
    const gitWorker = async () => {
      let k = 0;
      while (running()) {
        k += 1;
        await fs.writeFile(path.join(work, 'soak.txt'), `push ${k}\n`);
        await load.git(['add', 'soak.txt'], work);
        await load.git(['commit', '--quiet', '-m', `soak push ${k}`], work);
        await load.git(['push', '--quiet', 'origin', 'HEAD:refs/heads/soak'], work);
        const clone = path.join(dir, `clone-${k}`);
        await load.git(['clone', '--quiet', pushUrl.toString(), clone], dir);
        await fs.rm(clone, { recursive: true, force: true });
        await sleep(2_000);
      }
    };
    const client = { client_id: String(app.application_id), client_secret: String(app.secret) };
    const csrfOf = (page: PageAnswer | null): string => /name="authenticity_token" value="([^"]+)"/.exec(page?.text ?? '')?.[1] ?? '';
    // Sign in on the web page, approve the application, exchange the code, refresh, sign out.
    const codeFlow = async (): Promise<string | null> => {
      const signInPage = await load.http('GET', '/users/sign_in', { token: null, cookie: '' }) as PageAnswer | null;
      if (!signInPage) return null;
      const signedIn = await load.http('POST', '/users/sign_in', {
        token: null, cookie: signInPage.cookies.join('; '), expect: [302, 303],
        form: { authenticity_token: csrfOf(signInPage), 'user[login]': 'root', 'user[password]': PASSWORD },
      }) as PageAnswer | null;
      const session = signedIn?.cookies.find((c) => c.startsWith('_service_session='));
      if (!session) {
        load.error('signing in set no session cookie');
        return null;
      }
      const authorize = {
        client_id: client.client_id, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'api openid', state: 'soak',
      };
      const consent = await load.http('GET', `/oauth/authorize?${new URLSearchParams(authorize)}`, { token: null, cookie: session }) as PageAnswer | null;
      const approved = await load.http('POST', '/oauth/authorize', {
        token: null, cookie: session, expect: [302, 303], form: { ...authorize, authenticity_token: csrfOf(consent) },
      }) as PageAnswer | null;
      const code = approved?.location ? new URL(approved.location).searchParams.get('code') : null;
      if (!code) {
        load.error(`no code in the consent's redirect (${approved?.status} ${approved?.location})`);
        return null;
      }
      await load.http('POST', '/users/sign_out', {
        token: null, cookie: session, expect: [302, 303], form: { authenticity_token: csrfOf(consent) },
      });
      const tokens = await load.http('POST', '/oauth/token', {
        token: null, form: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, ...client },
      });
      if (!tokens?.refresh_token) return null;
      await load.http('GET', '/oauth/userinfo', { bearer: tokens.access_token });
      const refreshed = await load.http('POST', '/oauth/token', {
        token: null, form: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...client },
      });
      return refreshed?.access_token ?? null;
    };
    const oauthWorker = async () => {
      for (let round = 0; running(); round++) {
        if (round % 2 === 1) {
          const access = await codeFlow();
          if (access) {
            await load.http('GET', '/api/v4/user', { bearer: access });
            await load.http('POST', '/oauth/revoke', { token: null, form: { token: access, ...client } });
            await load.http('GET', '/api/v4/user', { bearer: access, expect: [401] });
          }
          await sleep(500);
          continue;
        }
        const grant = await load.http('POST', '/oauth/token', {
          token: null,
          form: { grant_type: 'password', username: 'root', password: PASSWORD, scope: 'api openid', ...client },
        });
        if (grant) {
          await load.http('GET', '/oauth/token/info', { bearer: grant.access_token });
          await load.http('GET', '/oauth/userinfo', { bearer: grant.access_token });
          await load.http('GET', '/api/v4/user', { bearer: grant.access_token });
          await load.http('POST', '/oauth/revoke', { token: null, form: { token: grant.access_token, ...client } });
          await load.http('GET', '/api/v4/user', { bearer: grant.access_token, expect: [401] });
        }
        await sleep(500);
      }
    };

    const samples: Sample[] = [];
    await scrape(kiln.base); // resets the event-loop window
    let cpuBefore = await cpuMs(pid);
    const sampler = async () => {
      let next = started + INTERVAL_S * 1000;
      while (next <= deadline + 100) {
        let fds = Infinity;
        while (Date.now() < next - 1000) {
          fds = Math.min(fds, await countFds(pid));
          await sleep(1000);
        }
        await sleep(Math.max(0, next - Date.now()));
        next += INTERVAL_S * 1000;
        const bucket = load.bucket;
        load.bucket = newBucket();
        const [rssMb, metrics, cpu, loadavg] = await Promise.all([
          readRss(pid), scrape(kiln!.base), cpuMs(pid), fs.readFile('/proc/loadavg', 'utf8'),
        ]);
        const cpuMsPerRequest = (cpu - cpuBefore) / Math.max(1, bucket.requests);
        cpuBefore = cpu;
        const s: Sample = {
          at: (Date.now() - started) / 1000, rssMb, fds: Math.min(fds, await countFds(pid)), cpuMsPerRequest,
          load: Number(loadavg.split(' ')[0]), ...metrics, bucket,
        };
        samples.push(s);
        printRow(s);
      }
    };

    console.log(`kiln soak: ${DURATION_S} s (${database.url ? 'PostgreSQL' : 'SQLite'}), a sample every ${INTERVAL_S} s, warm-up ${WARMUP_S} s, server pid ${pid}`);
    console.log(`${'t (s)'.padStart(6)} ${'RSS MB'.padStart(7)} ${'heap MB'.padStart(8)} ${'fds'.padStart(4)} ${'lag p99'.padStart(8)} ${'lag max'.padStart(8)} `
      + `${'requests'.padStart(8)} ${'git'.padStart(4)} ${'errors'.padStart(6)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} `
      + `${'CPU ms/req'.padStart(10)} ${'load'.padStart(5)}`);
    await Promise.all([sampler(), apiReader(), apiReader(), apiWriter(), gitWorker(), oauthWorker()]);

    // Every pipeline the pushes started ends, and ends well.
    let pipelines: { id: number; status: string }[] = [];
    const until = Date.now() + 120_000;
    for (;;) {
      pipelines = [];
      for (let page = 1; ; page++) {
        const list = await load.http('GET', `/api/v4/projects/${project.id}/pipelines?per_page=100&page=${page}`) as { id: number; status: string }[] | null;
        if (!list || list.length === 0) break;
        pipelines.push(...list);
        if (list.length < 100) break;
      }
      if (pipelines.every((p) => ['success', 'failed', 'canceled', 'skipped'].includes(p.status)) || Date.now() > until) break;
      await sleep(1_000);
    }
    const notSuccessful = pipelines.filter((p) => p.status !== 'success');
    for (const p of notSuccessful) load.error(`pipeline ${p.id} ended ${p.status}`);

    console.log(verdict(samples, load, pipelines.length, notSuccessful.length));
    process.exitCode = lastVerdictPassed ? 0 : 1;
  } finally {
    runner?.kill('SIGTERM');
    if (runner) await new Promise((r) => runner!.once('close', r));
    await kiln?.stop();
    await database.drop?.();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function printRow(s: Sample): void {
  const sorted = [...s.bucket.latencies].sort((x, y) => x - y);
  console.log(`${s.at.toFixed(0).padStart(6)} ${s.rssMb.toFixed(1).padStart(7)} ${s.heapMb.toFixed(1).padStart(8)} ${String(s.fds).padStart(4)} `
    + `${s.lagP99Ms.toFixed(1).padStart(8)} ${s.lagMaxMs.toFixed(1).padStart(8)} ${String(s.bucket.requests).padStart(8)} `
    + `${String(s.bucket.gitOps).padStart(4)} ${String(s.bucket.errors).padStart(6)} ${percentile(sorted, 50).toFixed(1).padStart(7)} `
    + `${percentile(sorted, 99).toFixed(1).padStart(7)} ${s.cpuMsPerRequest.toFixed(2).padStart(10)} ${s.load.toFixed(1).padStart(5)}`);
}

let lastVerdictPassed = false;

function verdict(samples: Sample[], load: Load, pipelines: number, badPipelines: number): string {
  const after = samples.filter((s) => s.at > WARMUP_S + 0.5);
  const third = Math.max(1, Math.floor(after.length / 3));
  const first = after.slice(0, third);
  const last = after.slice(after.length - third);
  const lines: string[] = [];
  let passed = after.length >= 3;
  if (!passed) lines.push(`FAIL too few samples after the warm-up (${after.length}); run longer`);
  const check = (ok: boolean, text: string) => {
    lines.push(`${ok ? 'ok  ' : 'FAIL'} ${text}`);
    if (!ok) passed = false;
  };
  const requests = samples.reduce((n, s) => n + s.bucket.requests, 0);
  const gitOps = samples.reduce((n, s) => n + s.bucket.gitOps, 0);
  check(load.totalErrors === 0,
    `errors: ${load.totalErrors} (${requests} requests, ${gitOps} git commands, ${pipelines} pipelines of which ${badPipelines} not successful)`);
  for (const e of load.errorSamples) lines.push(`       ${e}`);
  const growth = (key: 'rssMb' | 'fds') => {
    const a = median(first.map((s) => s[key]));
    const b = median(last.map((s) => s[key]));
    return { a, b, pct: a > 0 ? ((b - a) / a) * 100 : 0 };
  };
  const rss = growth('rssMb');
  const sign = (pct: number) => `${pct >= 0 ? '+' : ''}${pct.toFixed(1)} %`;
  check(rss.pct <= 10, `RSS after warm-up: median ${rss.a.toFixed(1)} MB (first third) → ${rss.b.toFixed(1)} MB (last third), ${sign(rss.pct)} (at most +10 %)`);
  const fds = growth('fds');
  check(fds.pct <= 10, `open descriptors (fewest of each interval) after warm-up: median ${fds.a} → ${fds.b}, ${sign(fds.pct)} (at most +10 %)`);
  const cpuFirst = median(first.map((s) => s.cpuMsPerRequest));
  const cpuLast = median(last.map((s) => s.cpuMsPerRequest));
  lines.push(`info server CPU per request: median ${cpuFirst.toFixed(2)} ms (first third) → ${cpuLast.toFixed(2)} ms (last third); `
    + `load average ${median(first.map((s) => s.load)).toFixed(1)} → ${median(last.map((s) => s.load)).toFixed(1)}`);
  const p99 = (ss: Sample[]) => percentile(ss.flatMap((s) => s.bucket.latencies).sort((x, y) => x - y), 99);
  const p99First = p99(first);
  const p99Last = p99(last);
  const bound = Math.max(1.5 * p99First, p99First + 10);
  check(p99Last <= bound,
    `p99 latency: ${p99First.toFixed(1)} ms (first third) → ${p99Last.toFixed(1)} ms (last third), at most ${bound.toFixed(1)} ms (1.5× or +10 ms)`);
  const lag = Math.max(...after.map((s) => s.lagP99Ms));
  lines.push(`info event-loop delay p99 after warm-up: at most ${lag.toFixed(1)} ms in any interval`);
  lastVerdictPassed = passed;
  return `\nverdict: ${passed ? 'PASS' : 'FAIL'}\n${lines.join('\n')}`;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
