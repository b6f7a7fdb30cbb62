/**
 * Who a request acts as, and with which credential: set by authentication (authenticate.ts),
 * read by every interface (REST, GraphQL, SCIM, web pages) and by the credential cache. Kept apart
 * from http/context.ts so that the cache and the context do not import each other.
 */
import type { UserRow } from '../../db/types.ts';
import type { CredentialKind } from '../../domain/auth/credential-events.ts';

/** Defined with the domain's credential events, which name the kind of a revoked credential. */
export type { CredentialKind };

export interface Credential {
  kind: CredentialKind;
  id: number;
  scopes: string[];
  /** For OAuth tokens: the application's uid. */
  applicationUid?: string | null;
  /** For job tokens: the job that owns it. */
  jobId?: number;
}

export interface Caller {
  /** The user the request acts as: the sudo target when sudo is used. */
  user: UserRow;
  /** The credential's owner. */
  initialUser: UserRow;
  credential: Credential;
  sudo: boolean;
}
