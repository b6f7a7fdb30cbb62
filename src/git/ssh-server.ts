/**
 * Git over SSH (issue 31, item 1), as the Service's gitlab-shell serves it: `git@host:group/project.git`
 * and `ssh://git@host:port/group/project.git`, user `git` only, authenticated by public key — a
 * user's SSH key (src/domain/keys) or a deploy key — and then only `git-upload-pack`,
 * `git-receive-pack` and `git-upload-archive` on a repository path. What the client may do is
 * decided by git-access.ts, the same decision git over HTTP takes; a push goes through the same
 * push session (push-session.ts): recorded as a repository write, push options read from the
 * stream, the project's state, events and pipelines afterwards.
 *
 * No shell (a shell request is answered with a welcome line and closed, as gitlab-shell does), no
 * other command ("Disallowed command"), no pseudo-terminal, no port or agent forwarding, no
 * subsystems; of the environment only GIT_PROTOCOL (protocol v2) is taken.
 *
 * Refusals after authentication are written to the client's standard error in gitlab-shell's
 * framed form and end with exit status 1. An expired key authenticates but may not run anything
 * ("Your SSH key has expired.", GitAccess#check_valid_actor!); a blocked or deactivated user is
 * told why, as over HTTP.
 *
 * With KILN_WORKERS every server process listens on the port: node:cluster shares a listening
 * socket among the workers for any net server, so SSH connections are spread as HTTP ones are.
 */
import { recordProjectFetch } from '../domain/statistics/project-statistics.ts';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import ssh2 from 'ssh2';
import type { AuthContext, Connection, ServerChannel, Session } from 'ssh2';
import type { KilnContext } from '../http/context.ts';
import type { KeyRow } from '../db/tables/keys.ts';
import { isStorableText } from '../db/constraints.ts';
import { findKeyBySha256, touchKeyLastUsed } from '../domain/keys/keys.queries.ts';
import { keyRestrictionError } from '../domain/keys/create-key.ts';
import { currentSettings } from '../domain/settings/settings.ts';
import { findUserById } from '../domain/users/users.queries.ts';
import { apiAccessDeniedReason } from '../domain/users/user-kind.ts';
import { gitEnv } from '../domain/repositories/git-command.ts';
import { repositoryPath } from '../domain/repositories/storage.ts';
import { readOrCreateFile } from '../domain/instance/first-boot-files.ts';
import { checkGitAccess, MESSAGES, type GitActor, type GitService } from './git-access.ts';
import { pushOptionSniffer } from './push-options.ts';
import { beginPush, HOOKS_DIR, pushHookEnv } from './push-session.ts';

const { Server, utils } = ssh2;

/** The only SSH user name (gitlab-shell's configured user). */
const SSH_USER = 'git';
/** Longest command line looked at; a repository path is far shorter. */
const MAX_COMMAND = 4096;
const GIT_PROTOCOL_VALUE = /^[A-Za-z0-9=:.,_-]{1,128}$/;
const SERVICES: readonly GitService[] = ['git-upload-pack', 'git-receive-pack', 'git-upload-archive'];
/** A connection that has not authenticated by then is closed (OpenSSH's LoginGraceTime is 120 s). */
const LOGIN_GRACE_MS = 60_000;
/** Public keys a client may offer on one connection (OpenSSH's MaxAuthTries is 6; agents hold more). */
const MAX_AUTH_TRIES = 20;

export interface SshServer {
  /** The port it listens on (the chosen one when asked for 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * The host key at `file`, generated there (ed25519, OpenSSH format, mode 0600) when absent, as the
 * other first-boot files are: processes starting together never read a half-written key.
 */
export async function loadOrCreateHostKey(file: string): Promise<Buffer> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  return Buffer.from(await readOrCreateFile(file, generateHostKey), 'utf8');
}

/**
 * A new ed25519 host key in OpenSSH format. ssh2's generator writes a key its own parser refuses
 * ("Malformed OpenSSH private key") about once in 250 tries: each is checked, and another made.
 */
function generateHostKey(): string {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const generated = utils.generateKeyPairSync('ed25519').private;
    if (!(utils.parseKey(generated) instanceof Error)) return generated;
  }
  throw new Error('could not generate an SSH host key');
}

/** The host key's text, refused with a clear message when it cannot be read as a private key. */
function checkedHostKey(file: string, key: Buffer): Buffer {
  const parsed = utils.parseKey(key);
  if (parsed instanceof Error) throw new Error(`KILN_SSH_HOST_KEY ${file}: ${parsed.message}`);
  return key;
}

/** `SHA256:<base64>` of a public key blob, as keys are stored (ssh-public-key.ts). */
function sha256Fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * `git-upload-pack '/group/project.git'` (or `git upload-pack …`, as gitlab-shell also accepts):
 * the service and the repository path without its leading slash; null for anything else. The path
 * is one argument, bare or single-quoted as git quotes it (`'\''` for a quote inside).
 */
export function parseGitCommand(command: string): { service: GitService; path: string } | null {
  if (command.length > MAX_COMMAND || !isStorableText(command)) return null;
  const m = /^(git[- ](?:upload-pack|receive-pack|upload-archive)) +(.+?) *$/.exec(command);
  if (!m) return null;
  const service = m[1].replace(' ', '-') as GitService;
  if (!SERVICES.includes(service)) return null;
  let arg = m[2];
  if (arg.startsWith("'")) {
    const q = /^'((?:[^']|'\\'')*)'$/.exec(arg);
    if (!q) return null;
    arg = q[1].replace(/'\\''/g, "'");
  } else if (/[\s'"\\]/.test(arg)) {
    return null;
  }
  let repo = arg.replace(/^\/+/, '');
  if (repo === '' || repo.length > 1024) return null;
  // The Service takes `group/project` and `group/project.git` alike.
  if (!repo.endsWith('.git')) repo = `${repo}.git`;
  return { service, path: repo };
}

/** gitlab-shell's framing of a refusal on standard error. */
function framed(message: string): string {
  const rule = '='.repeat(72);
  return `\n${rule}\n\n${message}\n\n${rule}\n\n`;
}

interface Authenticated {
  key: KeyRow;
}

export async function startSshServer(
  ctx: Pick<KilnContext, 'db' | 'config'>, log: FastifyBaseLogger, listen: { port: number; host: string },
): Promise<SshServer> {
  const { db, config } = ctx;
  const hostKey = checkedHostKey(config.sshHostKey, await loadOrCreateHostKey(config.sshHostKey));
  const clients = new Set<Connection>();

  const server = new Server({ hostKeys: [hostKey], ident: 'kiln' }, (client) => {
    clients.add(client);
    let authenticated: Authenticated | null = null;
    let tries = 0;
    const grace = setTimeout(() => client.end(), LOGIN_GRACE_MS);
    client.on('close', () => {
      clearTimeout(grace);
      clients.delete(client);
    });
    client.on('error', (err) => log.debug({ err }, 'ssh connection error'));

    client.on('authentication', (auth) => {
      tries += 1;
      if (tries > MAX_AUTH_TRIES) {
        client.end();
        return;
      }
      authenticate(auth).then((key) => {
        if (key === 'query') return auth.accept();
        if (!key) return auth.reject(['publickey']);
        authenticated = { key };
        clearTimeout(grace);
        auth.accept();
      }).catch((err: unknown) => {
        log.error({ err }, 'ssh authentication failed');
        auth.reject(['publickey']);
      });
    });

    // Global requests (tcpip-forward …) and every kind of channel but a session are refused.
    client.on('request', (_accept, reject) => reject?.());
    client.on('tcpip', (_accept, reject) => reject());
    client.on('openssh.streamlocal', (_accept, reject) => reject());

    client.on('ready', () => {
      client.on('session', (accept) => {
        const session = accept();
        handleSession(session, () => authenticated);
      });
    });
  });

  /** A verified key row; 'query' when the client only asks whether a key would do; null to refuse. */
  async function authenticate(auth: AuthContext): Promise<KeyRow | 'query' | null> {
    if (auth.method !== 'publickey' || auth.username !== SSH_USER) return null;
    const key = await findKeyBySha256(db, sha256Fingerprint(auth.key.data));
    if (!key) return null;
    if (!auth.signature || !auth.blob) return 'query';
    const parsed = utils.parseKey(key.key);
    const publicKey = Array.isArray(parsed) ? parsed[0] : parsed;
    if (!publicKey || publicKey instanceof Error) return null;
    if (!publicKey.getPublicSSH().equals(auth.key.data)) return null;
    if (publicKey.verify(auth.blob, auth.signature, auth.hashAlgo) !== true) return null;
    return key;
  }

  function handleSession(session: Session, who: () => Authenticated | null) {
    let gitProtocol: string | null = null;
    session.on('env', (accept, reject, info) => {
      if (info.key === 'GIT_PROTOCOL' && GIT_PROTOCOL_VALUE.test(info.val)) {
        gitProtocol = info.val;
        accept?.();
      } else {
        reject?.();
      }
    });
    session.on('pty', (_accept, reject) => reject?.());
    session.on('x11', (_accept, reject) => reject?.());
    session.on('auth-agent', (_accept, reject) => reject?.());
    session.on('subsystem', (_accept, reject) => reject?.());
    session.on('sftp', (_accept, reject) => reject?.());
    session.on('shell', (accept) => {
      const channel = accept();
      void welcome(channel, who());
    });
    session.on('exec', (accept, _reject, info) => {
      const channel = accept();
      runCommand(channel, who(), info.command, gitProtocol).catch((err: unknown) => {
        log.error({ err }, 'ssh command failed');
        finishChannel(channel, 1, 'Internal API error');
      });
    });
  }

  function finishChannel(channel: ServerChannel, code: number, message?: string) {
    if (message) channel.stderr.write(framed(message));
    channel.exit(code);
    channel.end();
  }

  /** gitlab-shell's answer to `ssh git@host`: who the key stands for, and no shell. */
  async function welcome(channel: ServerChannel, auth: Authenticated | null) {
    const user = auth && auth.key.type === 'Key' ? await findUserById(db, auth.key.user_id) : undefined;
    channel.write(`Welcome to kiln, ${user ? `@${user.username}` : 'Anonymous'}!\r\n`);
    finishChannel(channel, 0);
  }

  /** The actor the key stands for, or why it may not act now. */
  async function actorOf(key: KeyRow): Promise<GitActor | string> {
    // GitAccess#check_valid_actor!: "Your SSH key <the key's first validation error>."
    if (key.expires_at !== null && key.expires_at <= new Date().toISOString()) return 'Your SSH key has expired.';
    const restricted = keyRestrictionError(await currentSettings(db), key.key_type, key.bits);
    if (restricted) return `Your SSH key ${restricted}.`;
    const owner = await findUserById(db, key.user_id);
    if (key.type === 'DeployKey') return { kind: 'deploy_key', keyId: key.id, creator: owner ?? null };
    if (!owner) return MESSAGES.notFound;
    const denied = apiAccessDeniedReason(owner, config.externalUrl);
    if (denied) return denied;
    // An SSH key stands for its user wholly: no scopes narrow it.
    return { kind: 'user', user: owner, abilities: { download: true, push: true } };
  }

  async function runCommand(channel: ServerChannel, auth: Authenticated | null, command: string, gitProtocol: string | null) {
    if (!auth) return finishChannel(channel, 1, 'Disallowed command');
    const parsed = parseGitCommand(command);
    if (!parsed) return finishChannel(channel, 1, 'Disallowed command');
    const actor = await actorOf(auth.key);
    if (typeof actor === 'string') return finishChannel(channel, 1, actor);
    const access = await checkGitAccess(db, 'ssh', actor, parsed.path, parsed.service, config.storages);
    if (!access.ok) return finishChannel(channel, 1, access.message);
    await touchKeyLastUsed(db, auth.key.id).catch((err: unknown) => log.warn({ err }, 'could not record when an SSH key was used'));

    const userId = actor.kind === 'user' ? actor.user.id : actor.kind === 'deploy_key' ? actor.creator?.id ?? null : null;
    const env = gitEnv(gitProtocol ? { GIT_PROTOCOL: gitProtocol } : {});
    if (!access.pushing) {
      // A project's fetches per day (the Service counts each git-upload-pack it allows).
      if (parsed.service === 'git-upload-pack' && access.target.kind === 'project') {
        await recordProjectFetch(db, access.target.id).catch((err: unknown) => log.warn({ err }, 'could not count a fetch'));
      }
      const gitDir = repositoryPath(config.storages, access.target.storage, access.target.diskPath);
      await runGit(channel, [parsed.service.slice('git-'.length), gitDir], env, null);
      return;
    }
    const sniffer = pushOptionSniffer();
    const session = await beginPush(ctx, log, access.target, sniffer, actor);
    if (!session.ok) return finishChannel(channel, 1, session.reason === 'read_only' ? MESSAGES.readOnly : MESSAGES.notFound);
    try {
      const gitDir = repositoryPath(config.storages, session.pushed.storage, session.pushed.diskPath);
      // Each ref change judged against protected branches and tags, as over HTTP (push-session.ts).
      const hooks = session.accessFile ? ['-c', `core.hooksPath=${HOOKS_DIR}`] : [];
      const args = ['-c', 'receive.advertisePushOptions=true', ...hooks, 'receive-pack', gitDir];
      await runGit(channel, args, session.accessFile ? { ...env, ...pushHookEnv(session.accessFile) } : env, {
        timeLimitMs: config.gitPushTimeLimit * 1000,
        input: sniffer,
        finish: (exitCode) => session.finish(exitCode, userId),
      });
    } finally {
      await session.end();
    }
  }

  /**
   * Runs git with the channel as its standard streams, in a process group of its own that ends
   * with the connection (or the time limit); the exit status goes back once `finish` has run.
   */
  function runGit(
    channel: ServerChannel, args: string[], env: NodeJS.ProcessEnv,
    push: { timeLimitMs: number; input: NodeJS.ReadWriteStream; finish: (exitCode: number) => Promise<void> } | null,
  ): Promise<void> {
    return new Promise((resolve) => {
      const child = spawn('git', args, { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      const endGroup = () => {
        if (child.pid === undefined || child.exitCode !== null) return;
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch { /* gone already */ }
      };
      const limit = push ? setTimeout(endGroup, push.timeLimitMs) : null;
      channel.on('close', endGroup);
      child.stdin.on('error', () => { /* git exited early; its exit status says why */ });
      if (push) channel.pipe(push.input).pipe(child.stdin);
      else channel.pipe(child.stdin);
      child.stdout.pipe(channel, { end: false });
      child.stderr.pipe(channel.stderr, { end: false });
      let done = false;
      const close = (code: number) => {
        if (done) return;
        done = true;
        if (limit) clearTimeout(limit);
        void (push?.finish(code) ?? Promise.resolve()).catch(() => undefined).finally(() => {
          channel.exit(code);
          channel.end();
          resolve();
        });
      };
      child.on('error', (err) => {
        log.error({ err }, 'could not start git for an SSH client');
        channel.stderr.write(framed('Internal API error'));
        close(1);
      });
      child.on('close', (code) => close(code ?? 1));
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err: Error) => log.error({ err }, 'ssh server error'));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () => new Promise<void>((resolve) => {
      for (const c of clients) c.end();
      server.close(() => resolve());
    }),
  };
}
