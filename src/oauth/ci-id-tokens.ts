/**
 * A job's `id_tokens:` (the Service's Gitlab::Ci::JwtV2, a keyword added after 15.2): one RS256
 * JWT per token the job names, signed with the instance's CI signing key (`ci_jwt.pem`,
 * published with the OIDC key at /oauth/discovery/keys, so a relying party verifies it as it
 * verifies the Service's), `aud` as the configuration gives it (its variables expanded), the
 * JwtV2 claims of the job, project, pipeline and user, valid from now for the job's timeout and
 * five minutes more. Each reaches the runner as a masked, non-public variable of its name.
 */
import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import type { SigningKey } from './keys.ts';

export interface CiIdTokenContext {
  issuer: string;
  job: { id: number; ref: string; tag: boolean; timeout: number | null; runnerId: number | null };
  pipeline: { id: number; source: string; sha: string };
  project: { id: number; path: string; namespaceId: number; namespacePath: string };
  user: { id: number; username: string; email: string } | null;
  refProtected: boolean;
}

/** Gitlab::Ci::Jwt::DEFAULT_EXPIRE_TIME: five minutes past the job's timeout. */
const LEEWAY_SECONDS = 5 * 60;
const DEFAULT_TIMEOUT_SECONDS = 60 * 60;

export async function signCiIdToken(key: SigningKey, c: CiIdTokenContext, aud: string | string[]): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const refType = c.job.tag ? 'tag' : 'branch';
  return new SignJWT({
    namespace_id: String(c.project.namespaceId),
    namespace_path: c.project.namespacePath,
    project_id: String(c.project.id),
    project_path: c.project.path,
    ...(c.user ? { user_id: String(c.user.id), user_login: c.user.username, user_email: c.user.email } : {}),
    pipeline_id: String(c.pipeline.id),
    pipeline_source: c.pipeline.source,
    job_id: String(c.job.id),
    ref: c.job.ref,
    ref_type: refType,
    ref_protected: String(c.refProtected),
    ...(c.job.runnerId !== null ? { runner_id: c.job.runnerId } : {}),
    sha: c.pipeline.sha,
  })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
    .setIssuer(c.issuer)
    .setSubject(`project_path:${c.project.path}:ref_type:${refType}:ref:${c.job.ref}`)
    .setAudience(aud)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + (c.job.timeout ?? DEFAULT_TIMEOUT_SECONDS) + LEEWAY_SECONDS)
    .setJti(crypto.randomUUID())
    .sign(key.privateKey);
}
