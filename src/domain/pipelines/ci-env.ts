/** What the pipeline engine needs besides the database: where repositories and CI files live, and limits. */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';

export interface CiEnv {
  db: Kysely<DB>;
  storages: StorageShard[];
  /** KILN_DATA_DIR: job logs and artifacts live under `ci/` there. */
  dataDir: string;
  /** Seconds a job may wait for a runner before it is failed as stuck (KILN_CI_PENDING_TIMEOUT). */
  pendingTimeout: number;
  /** Hosts `include:remote` may fetch from (KILN_CI_REMOTE_INCLUDE_HOSTS). */
  remoteIncludeHosts: string[];
  /** Directory whose files `include:template` reads before kiln's own templates (KILN_CI_TEMPLATES_DIR), or null. */
  templatesDir: string | null;
  /** KILN_EXTERNAL_URL, for the CI_SERVER_* and CI_PROJECT_URL variables rules may read. */
  externalUrl: string;
  /** KILN_SSH_PORT, for the git_ssh_url of webhook payloads. */
  sshPort?: number;
}

interface CiConfigFields {
  storages: StorageShard[]; dataDir: string; ciPendingTimeout: number;
  ciRemoteIncludeHosts?: string[]; ciTemplatesDir?: string | null; externalUrl?: string; sshPort?: number;
}

export function ciEnvFrom(db: Kysely<DB>, config: CiConfigFields): CiEnv {
  return {
    db, storages: config.storages, dataDir: config.dataDir, pendingTimeout: config.ciPendingTimeout,
    remoteIncludeHosts: config.ciRemoteIncludeHosts ?? [], templatesDir: config.ciTemplatesDir ?? null,
    externalUrl: config.externalUrl ?? 'http://localhost', sshPort: config.sshPort,
  };
}
