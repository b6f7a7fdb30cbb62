/**
 * Who may fetch from or push to a repository, for git over HTTP (smart-http.ts) and over SSH
 * (ssh-server.ts) alike: the Service's GitAccess, one decision for both transports. Order of
 * checks: the protocol allowed (`enabled_git_access_protocol`), existence and read access (404),
 * the credential's abilities and the role (403), then archived and read-only repositories (403).
 *
 * Actors: anonymous (HTTP only), a user with the abilities of their credential (an SSH key may do
 * everything its user may), or a deploy key, which reads the projects it is enabled on (and what
 * anyone may read) and pushes only where enabled with `can_push` (GitAccess#deploy_key?,
 * DeployKey#has_access_to? and #can_push_to?), or a deploy token (HTTP only), which reaches only
 * its project or the projects under its group: elsewhere it does not authenticate at all (401, as
 * lib/gitlab/auth.rb deploy_token_check gives no result for a project the token cannot reach), and
 * where it reaches it fetches with `read_repository` and never pushes.
 */
import type { Kysely } from 'kysely';
import type { StorageShard } from '../config/schema.ts';
import type { DB, UserRow } from '../db/types.ts';
import { READ_ONLY_MESSAGE } from '../domain/repositories/repositories.ts';
import { currentSettings } from '../domain/settings/settings.ts';
import { findDeployKeysProject } from '../domain/deploy-keys/deploy-keys.queries.ts';
import type { DeployTokenRow } from '../db/tables/deploy-tokens.ts';
import { deployTokenReaches } from '../domain/deploy-tokens/deploy-tokens.ts';
import { findRepositoryTarget, type RepositoryTarget } from './repository-target.ts';
import { PUSH_CODE_DENIED } from '../domain/protected-refs/ref-rules.ts';

export type GitService = 'git-upload-pack' | 'git-receive-pack' | 'git-upload-archive';

export const MESSAGES = {
  notFound: "The project you were looking for could not be found or you don't have permission to view it.",
  download: 'You are not allowed to download code from this project.',
  push: PUSH_CODE_DENIED,
  deployKeyPush: 'This deploy key does not have write access to this project.',
  archived: 'You are not allowed to push code to an archived project.',
  readOnly: `You are not allowed to push code to this project. ${READ_ONLY_MESSAGE}`,
  denied: 'HTTP Basic: Access denied',
  dumb: 'Only the smart HTTP protocol is supported.',
  httpProtocol: 'Git access over HTTP is not allowed',
  sshProtocol: 'Git access over SSH is not allowed',
} as const;

export interface GitAbilities {
  download: boolean;
  push: boolean;
}

export type GitActor =
  | { kind: 'anonymous' }
  | { kind: 'user'; user: UserRow; abilities: GitAbilities }
  /** `creator`: the key's creator, who a deploy key's push is recorded as (DeployKey#user). */
  | { kind: 'deploy_key'; keyId: number; creator: UserRow | null }
  /** An active deploy token (git-credentials.ts); `abilities` from its scopes. */
  | { kind: 'deploy_token'; token: DeployTokenRow; abilities: GitAbilities };

export type GitAccess =
  | { ok: true; target: RepositoryTarget; pushing: boolean }
  /** `challenge`: HTTP asks an anonymous client for credentials (401) rather than saying more. */
  | { ok: false; status: 401 | 403 | 404; message: string; challenge?: boolean };

function refuse(status: 401 | 403 | 404, message: string, challenge = false): GitAccess {
  return challenge ? { ok: false, status, message, challenge } : { ok: false, status, message };
}

/** What the actor may do with the target: the user's role, or a deploy key's link to the project. */
async function permissionsOf(db: Kysely<DB>, target: RepositoryTarget, actor: GitActor) {
  if (actor.kind === 'user') return target.permissions(actor.user);
  const anyone = await target.permissions(null);
  if (actor.kind === 'anonymous') return anyone;
  if (actor.kind === 'deploy_token') {
    // deploy_token_check: no result for a project whose repository is disabled.
    const reaches = target.kind === 'project' && target.repositoryEnabled !== false
      && deployTokenReaches(actor.token, target.id, target.lineage ?? []);
    return { read: reaches, download: reaches, push: false };
  }
  // Deploy keys reach projects only (not wikis or snippets).
  const link = target.kind === 'project' ? await findDeployKeysProject(db, actor.keyId, target.id) : undefined;
  return {
    read: anyone.read || link !== undefined,
    download: anyone.download || link !== undefined,
    push: link?.can_push === 1,
  };
}

/** GitAccess#check_protocol!: the instance's `enabled_git_access_protocol` leaves the other transport out. */
export async function protocolRefusal(db: Kysely<DB>, protocol: 'http' | 'ssh'): Promise<string | null> {
  const allowed = (await currentSettings(db)).enabled_git_access_protocol;
  if (protocol === 'http' && allowed === 'ssh') return MESSAGES.httpProtocol;
  if (protocol === 'ssh' && allowed === 'http') return MESSAGES.sshProtocol;
  return null;
}

export async function checkGitAccess(
  db: Kysely<DB>, protocol: 'http' | 'ssh', actor: GitActor, fullPath: string, service: GitService, shards: StorageShard[],
): Promise<GitAccess> {
  // Before anything else (a transport may have asked already, before reading credentials).
  const protocolRefused = await protocolRefusal(db, protocol);
  if (protocolRefused) return refuse(403, protocolRefused);

  const target = await findRepositoryTarget(db, shards, fullPath);
  const can = target ? await permissionsOf(db, target, actor) : { read: false, download: false, push: false };
  const pushing = service === 'git-receive-pack';
  // Anonymous clients are asked for credentials rather than told the repository is missing.
  if (actor.kind === 'anonymous' && (pushing || !can.download)) return refuse(401, MESSAGES.denied, true);
  // A deploy token outside its project or group is no credential there.
  if (actor.kind === 'deploy_token' && !can.read) return refuse(401, MESSAGES.denied, true);
  if (!target || !can.read) return refuse(404, MESSAGES.notFound);
  if ((actor.kind === 'user' || actor.kind === 'deploy_token') && !(pushing ? actor.abilities.push : actor.abilities.download)) {
    return refuse(403, pushing ? MESSAGES.push : MESSAGES.download);
  }
  if (!pushing && !can.download) return refuse(403, MESSAGES.download);
  if (pushing) {
    // GitAccess#check_change_access! (any change): push_code, or some branch an open merge request
    // lets the user push to as the target's merger (Project#any_branch_allows_collaboration?); which
    // branches the push may change is the pre-receive check's (PushCheck, hooks/pre-receive.ts).
    const collaborating = !can.push && actor.kind === 'user' && target.collaborationBranches
      ? (await target.collaborationBranches(actor.user)).length > 0 : false;
    if (!can.push && !collaborating) return refuse(403, actor.kind === 'deploy_key' ? MESSAGES.deployKeyPush : MESSAGES.push);
    if (target.archived) return refuse(403, MESSAGES.archived);
    if (target.readOnly) return refuse(403, MESSAGES.readOnly);
  }
  // A project's wiki is cloned and pushed to before any page was written (Wiki#wiki creates it).
  if (target.ensureRepository) await target.ensureRepository();
  return { ok: true, target, pushing };
}
