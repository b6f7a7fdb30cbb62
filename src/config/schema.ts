/**
 * Every environment variable kiln reads, in one table (CONTRACT §2).
 *
 * Each entry says what the variable means, its default, and how a raw string becomes a value.
 * `loadConfig` walks the table once at start and collects every problem before failing, so an
 * operator sees the whole list of what is wrong rather than one error per restart.
 */
import os from 'node:os';
import path from 'node:path';

export interface StorageShard {
  name: string;
  path: string;
}

export interface Config {
  port: number;
  host: string;
  externalUrl: string;
  dataDir: string;
  /** Where integrations send mail (emails-on-push): an smtp:// or smtps:// URL; null: no mail is sent. */
  smtpUrl: string | null;
  /** The From address of kiln's mail. */
  smtpFrom: string;
  /** Base URL of the Asana API the asana integration calls (another only for a proxy or tests). */
  asanaApiUrl: string;
  databaseUrl: string | null;
  storages: StorageShard[];
  rootPassword: string | null;
  rootToken: string | null;
  runnerRegistrationToken: string | null;
  redisUrl: string | null;
  logLevel: string;
  /** Requests a minute one IP may make without credentials; 0 turns the limit off. */
  rateLimitPerIp: number;
  /** Requests a minute one authenticated user may make; 0 turns the limit off. */
  rateLimitPerUser: number;
  /** Longest query string accepted before 414 (spec, Limits: "Query string length"). */
  maxQueryStringBytes: number;
  /** Impersonation tokens work unless the instance turns them off (spec, Authentication). */
  impersonationEnabled: boolean;
  /** Text matching any of these is judged spam by the default checker (src/domain/spam). */
  spamPatterns: RegExp[];
  /** reCAPTCHA v2 site key and secret: with both set, spam may be retried with a CAPTCHA. */
  recaptchaSiteKey: string | null;
  recaptchaSecret: string | null;
  /** Where CAPTCHA responses are verified (a reCAPTCHA v2 `siteverify` endpoint). */
  recaptchaVerifyUrl: string;
  /** Background jobs this process runs at once; 0: this process runs none (src/workers). */
  jobConcurrency: number;
  /** How often idle workers look for due jobs (they also wake when this process enqueues). */
  jobPollMs: number;
  /** How long a claimed job is a worker's before another may take it over (renewed while it runs). */
  jobLeaseSeconds: number;
  /** Test-only: storage moves pause this long after copying, so tests can interrupt a move. */
  storageMoveTestDelayMs: number;
  /**
   * The build_timeout of new projects: seconds a CI job may run unless its configuration sets
   * `timeout:` (the Service's project default, 1 hour).
   */
  ciJobTimeout: number;
  /** Seconds a CI job may wait for a runner before it fails as stuck (the Service's 1 day). */
  ciPendingTimeout: number;
  /** Seconds between runs of the CI timeout sweeper; 0: this process runs none. */
  ciSweepInterval: number;
  /** Seconds between the pipeline scheduler's looks for due schedules; 0: this process runs none. */
  pipelineScheduleInterval: number;
  /**
   * Seconds a git push may run before kiln ends it; also how long (plus a grace period) the
   * record of a push whose process died keeps a storage move from being scheduled.
   */
  gitPushTimeLimit: number;
  /** Server processes sharing the port (node:cluster); 1 serves from this process alone (src/cluster/workers.ts). */
  workers: number;
  /** Hosts (`host` or `host:port`) CI `include:remote` may fetch from; empty: none. */
  ciRemoteIncludeHosts: string[];
  /** Directory of the files CI `include:template` reads; null: no templates. */
  ciTemplatesDir: string | null;
  /** Port of git over SSH (src/git/ssh-server.ts); 0: no SSH server. */
  sshPort: number;
  /** The SSH server's private host key (OpenSSH or PEM); generated there on first boot when absent. */
  sshHostKey: string;
}

export type Env = Record<string, string | undefined>;

type Parse<T> = (raw: string) => T | { problem: string };

export interface Variable<K extends keyof Config> {
  name: string;
  key: K;
  doc: string;
  default: (env: Env, partial: Partial<Config>) => Config[K];
  parse: Parse<Config[K]>;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(min: number, max: number): Parse<number> {
  return (raw) => {
    if (!/^\d+$/.test(raw)) return { problem: `must be a whole number, got "${raw}"` };
    const n = Number(raw);
    if (n < min || n > max) return { problem: `must be between ${min} and ${max}, got ${n}` };
    return n;
  };
}

function url(protocols: string[]): Parse<string> {
  return (raw) => {
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) {
        return { problem: `must use ${protocols.join(' or ')}, got "${u.protocol}"` };
      }
      return raw;
    } catch {
      return { problem: `is not a URL: "${raw}"` };
    }
  };
}

const text: Parse<string> = (raw) => raw;

const boolean: Parse<boolean> = (raw) => {
  if (/^(true|1|yes|on)$/i.test(raw)) return true;
  if (/^(false|0|no|off)$/i.test(raw)) return false;
  return { problem: `must be true or false, got "${raw}"` };
};

/** `name=path,name=path`: names are shard names, paths are resolved against the working directory. */
const storages: Parse<StorageShard[]> = (raw) => {
  const shards: StorageShard[] = [];
  for (const part of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    const name = eq > 0 ? part.slice(0, eq).trim() : '';
    const dir = eq > 0 ? part.slice(eq + 1).trim() : '';
    if (!/^[A-Za-z0-9_.-]+$/.test(name) || !dir) {
      return { problem: `each shard must be written name=path, got "${part}"` };
    }
    if (shards.some((s) => s.name === name)) return { problem: `names shard "${name}" twice` };
    shards.push({ name, path: path.resolve(dir) });
  }
  if (shards.length === 0) return { problem: 'must name at least one shard' };
  if (!shards.some((s) => s.name === 'default')) return { problem: 'must include a shard named "default"' };
  return shards;
};

/** `a,b,c`: each part a regular expression, matched case-insensitively. */
const spamPatterns: Parse<RegExp[]> = (raw) => {
  const patterns: RegExp[] = [];
  for (const part of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    try {
      patterns.push(new RegExp(part, 'iu'));
    } catch {
      return { problem: `has an invalid regular expression: "${part}"` };
    }
  }
  return patterns;
};

export const VARIABLES: Variable<keyof Config>[] = [
  { name: 'PORT', key: 'port', doc: 'HTTP port', default: () => 3000, parse: integer(0, 65535) },
  { name: 'HOST', key: 'host', doc: 'bind address', default: () => '127.0.0.1', parse: text },
  {
    name: 'KILN_EXTERNAL_URL',
    key: 'externalUrl',
    doc: 'the base URL kiln names itself by (web_url, Link headers, OAuth issuer, clone URLs)',
    default: (_env, c) => `http://localhost:${c.port ?? 3000}`,
    parse: (raw) => {
      const parsed = url(['http:', 'https:'])(raw);
      return typeof parsed === 'string' ? parsed.replace(/\/+$/, '') : parsed;
    },
  },
  {
    name: 'KILN_DATA_DIR',
    key: 'dataDir',
    doc: 'embedded database, artifacts, job logs, signing keys, default repository storage',
    default: () => path.resolve('data'),
    parse: (raw) => path.resolve(raw),
  },
  {
    name: 'DATABASE_URL',
    key: 'databaseUrl',
    doc: 'postgres:// URL; PostgreSQL instead of the embedded SQLite file',
    default: () => null,
    parse: url(['postgres:', 'postgresql:']),
  },
  {
    name: 'KILN_STORAGES',
    key: 'storages',
    doc: 'repository storage shards, name=path separated by commas',
    default: (_env, c) => [{ name: 'default', path: path.join(c.dataDir ?? path.resolve('data'), 'repositories') }],
    parse: storages,
  },
  {
    name: 'KILN_ROOT_PASSWORD',
    key: 'rootPassword',
    doc: 'password of root at first boot (generated and printed once when unset)',
    default: () => null,
    parse: (raw) => (raw.length >= 8 ? raw : { problem: 'must be at least 8 characters' }),
  },
  {
    name: 'KILN_ROOT_TOKEN',
    key: 'rootToken',
    doc: 'at first boot, a personal access token for root with exactly this value',
    default: () => null,
    parse: (raw) => (raw.length >= 8 ? raw : { problem: 'must be at least 8 characters' }),
  },
  {
    name: 'KILN_RUNNER_REGISTRATION_TOKEN',
    key: 'runnerRegistrationToken',
    doc: 'instance-wide runner registration token (generated when unset)',
    default: () => null,
    parse: (raw) => (raw.length >= 8 ? raw : { problem: 'must be at least 8 characters' }),
  },
  {
    name: 'KILN_REDIS_URL',
    key: 'redisUrl',
    doc: 'redis:// URL shared by server processes for rate limits and cache invalidation',
    default: () => null,
    parse: url(['redis:', 'rediss:']),
  },
  {
    name: 'LOG_LEVEL',
    key: 'logLevel',
    doc: 'pino log level',
    default: () => 'info',
    parse: (raw) => (LOG_LEVELS.includes(raw) ? raw : { problem: `must be one of ${LOG_LEVELS.join(', ')}` }),
  },
  {
    name: 'KILN_RATE_LIMIT_PER_IP',
    key: 'rateLimitPerIp',
    doc: 'requests a minute per IP without credentials (0: off)',
    default: () => 3600,
    parse: integer(0, 10_000_000),
  },
  {
    name: 'KILN_RATE_LIMIT_PER_USER',
    key: 'rateLimitPerUser',
    doc: 'requests a minute per authenticated user (0: off)',
    default: () => 7200,
    parse: integer(0, 10_000_000),
  },
  {
    name: 'KILN_MAX_QUERY_STRING',
    key: 'maxQueryStringBytes',
    doc: 'longest query string in bytes before 414',
    default: () => 8192,
    parse: integer(256, 1_048_576),
  },
  {
    name: 'KILN_IMPERSONATION_ENABLED',
    key: 'impersonationEnabled',
    doc: 'whether impersonation tokens authenticate',
    default: () => true,
    parse: boolean,
  },
  {
    name: 'KILN_SPAM_PATTERNS',
    key: 'spamPatterns',
    doc: 'comma-separated regular expressions (case-insensitive); user-written text matching one is spam (unset: none is)',
    default: () => [],
    parse: spamPatterns,
  },
  {
    name: 'KILN_RECAPTCHA_SITE_KEY',
    key: 'recaptchaSiteKey',
    doc: 'reCAPTCHA v2 site key handed to clients whose request was judged spam (with KILN_RECAPTCHA_SECRET)',
    default: () => null,
    parse: text,
  },
  {
    name: 'KILN_RECAPTCHA_SECRET',
    key: 'recaptchaSecret',
    doc: 'reCAPTCHA v2 secret used to verify CAPTCHA responses (with KILN_RECAPTCHA_SITE_KEY)',
    default: () => null,
    parse: text,
  },
  {
    name: 'KILN_RECAPTCHA_VERIFY_URL',
    key: 'recaptchaVerifyUrl',
    doc: 'reCAPTCHA v2 compatible verify endpoint',
    default: () => 'https://www.google.com/recaptcha/api/siteverify',
    parse: url(['http:', 'https:']),
  },
  {
    name: 'KILN_JOB_CONCURRENCY',
    key: 'jobConcurrency',
    doc: 'background jobs (e.g. storage moves) this process runs at once; 0 runs none',
    default: () => 4,
    parse: integer(0, 256),
  },
  {
    name: 'KILN_JOB_POLL_MS',
    key: 'jobPollMs',
    doc: 'how often idle workers look for due background jobs, in milliseconds',
    default: () => 1000,
    parse: integer(10, 600_000),
  },
  {
    name: 'KILN_JOB_LEASE_SECONDS',
    key: 'jobLeaseSeconds',
    doc: 'seconds a claimed background job stays with its worker without renewal before another worker may take it over',
    default: () => 30,
    parse: integer(1, 3600),
  },
  {
    name: 'KILN_STORAGE_MOVE_TEST_DELAY_MS',
    key: 'storageMoveTestDelayMs',
    doc: 'TEST ONLY: pause each storage move this many milliseconds after copying, to interrupt it mid-move (0: off)',
    default: () => 0,
    parse: integer(0, 600_000),
  },
  {
    name: 'KILN_CI_JOB_TIMEOUT',
    key: 'ciJobTimeout',
    doc: 'build_timeout of new projects: seconds a CI job may run unless its configuration sets timeout:',
    default: () => 3600,
    parse: integer(60, 30 * 86_400),
  },
  {
    name: 'KILN_CI_PENDING_TIMEOUT',
    key: 'ciPendingTimeout',
    doc: 'seconds a CI job may wait for a runner before it fails with stuck_or_timeout_failure',
    default: () => 86_400,
    parse: integer(60, 30 * 86_400),
  },
  {
    name: 'KILN_CI_SWEEP_INTERVAL',
    key: 'ciSweepInterval',
    doc: 'seconds between runs of the CI timeout sweeper (0: this process runs none)',
    default: () => 60,
    parse: integer(0, 86_400),
  },
  {
    name: 'KILN_PIPELINE_SCHEDULE_INTERVAL',
    key: 'pipelineScheduleInterval',
    doc: 'seconds between the pipeline scheduler\'s looks for due schedules (0: this process runs none); '
      + 'a schedule runs at the first look after its cron time',
    default: () => 60,
    parse: integer(0, 86_400),
  },
  {
    name: 'KILN_GIT_PUSH_TIME_LIMIT',
    key: 'gitPushTimeLimit',
    doc: 'seconds a git push may run before it is ended; a push that is running keeps its repository from being scheduled for a '
      + 'storage move',
    default: () => 3600,
    parse: integer(1, 86_400),
  },
  // KILN_WORKERS (issue 17): several server processes on one port.
  {
    name: 'KILN_WORKERS',
    key: 'workers',
    doc: 'server processes sharing the port (node:cluster), or "auto" for one per core; 1 serves from a single process',
    default: () => 1,
    parse: (raw) => (raw === 'auto' ? os.availableParallelism() : integer(1, 256)(raw)),
  },
  {
    name: 'KILN_CI_REMOTE_INCLUDE_HOSTS',
    key: 'ciRemoteIncludeHosts',
    doc: 'comma-separated hosts (host or host:port) whose files CI include:remote may fetch; empty: no remote includes',
    default: () => [],
    parse: (raw) => {
      const hosts = raw.split(',').map((h) => h.trim()).filter((h) => h !== '');
      return hosts.every((h) => /^[a-zA-Z0-9.-]+(:\d{1,5})?$/.test(h)) ? hosts : { problem: 'must be a comma-separated list of host or host:port' };
    },
  },
  {
    name: 'KILN_CI_TEMPLATES_DIR',
    key: 'ciTemplatesDir',
    doc: 'directory of CI include:template files (e.g. Bash.gitlab-ci.yml) that win over kiln\'s built-in templates of the same name; '
      + 'unset: the built-in ones only',
    default: () => null,
    parse: (raw) => (raw.startsWith('/') ? raw : { problem: 'must be an absolute path' }),
  },
  // Integrations (issue 31, item 9).
  {
    name: 'KILN_SMTP_URL',
    key: 'smtpUrl',
    doc: 'smtp:// or smtps:// URL (credentials in it if the server wants them) through which integrations send mail (emails-on-push); unset: no mail',
    default: () => null,
    parse: url(['smtp:', 'smtps:']),
  },
  {
    name: 'KILN_SMTP_FROM',
    key: 'smtpFrom',
    doc: 'the From address of the mail kiln sends',
    default: (_env, c) => `kiln@${new URL(c.externalUrl ?? 'http://localhost').hostname}`,
    parse: (raw) => (/^[^\s@<>]+@[^\s@<>]+$/.test(raw) && raw.length <= 255 ? raw : { problem: 'must be an email address' }),
  },
  {
    name: 'KILN_ASANA_API_URL',
    key: 'asanaApiUrl',
    doc: 'base URL of the Asana API the asana integration calls; change it only for a proxy or tests',
    default: () => 'https://app.asana.com/api/1.0',
    parse: (raw) => {
      const parsed = url(['http:', 'https:'])(raw);
      return typeof parsed === 'string' ? parsed.replace(/\/+$/, '') : parsed;
    },
  },
  // Git over SSH (issue 31, item 1).
  {
    name: 'KILN_SSH_PORT',
    key: 'sshPort',
    doc: 'port of git over SSH (git@host:group/project.git), on HOST; 0 turns the SSH server off',
    default: () => 2222,
    parse: integer(0, 65535),
  },
  {
    name: 'KILN_SSH_HOST_KEY',
    key: 'sshHostKey',
    doc: "path of the SSH server's private host key; an ed25519 key is generated there on first boot when absent",
    default: (_env, c) => path.join(c.dataDir ?? path.resolve('data'), 'keys', 'ssh_host_ed25519_key'),
    parse: (raw) => path.resolve(raw),
  },
];
