/**
 * First boot (CONTRACT §2): root is user id 1, username `root`, email `admin@example.com`,
 * administrator, active; with KILN_ROOT_TOKEN, also the `initial` token of exactly that value.
 * Idempotent: later boots find root and change nothing.
 */
import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { nowIso } from '../clock.ts';
import { digest } from '../tokens/secret.ts';
import { insertPersonalAccessToken } from '../tokens/tokens.queries.ts';
import { findUserById, insertUserWithNamespace } from '../users/users.queries.ts';
import { hashPassword, randomPassword } from '../users/password.ts';
import { readOrCreateSecret } from './instance.queries.ts';

export const ROOT_TOKEN_SCOPES = 'api read_api read_user read_repository write_repository sudo';

export interface BootstrapResult {
  secretKeyBase: string;
  /** Set only on the boot that created root without KILN_ROOT_PASSWORD: print it once. */
  generatedRootPassword: string | null;
}

export async function bootstrapInstance(
  db: Kysely<DB>,
  opts: { rootPassword: string | null; rootToken: string | null; dialect: 'sqlite' | 'postgres' },
): Promise<BootstrapResult> {
  const secretKeyBase = await readOrCreateSecret(db, 'secret_key_base', () => crypto.randomBytes(64).toString('hex'));
  let generatedRootPassword: string | null = null;
  if (!(await findUserById(db, 1))) {
    const password = opts.rootPassword ?? randomPassword();
    if (!opts.rootPassword) generatedRootPassword = password;
    try {
      await insertUserWithNamespace(db, {
        username: 'root', email: 'admin@example.com', name: 'Administrator', admin: 1,
        encrypted_password: await hashPassword(password), confirmed_at: nowIso(),
      }, { id: 1 });
      // An explicit id leaves PostgreSQL's sequence behind; move it past root.
      if (opts.dialect === 'postgres') {
        await sql`select setval(pg_get_serial_sequence('users', 'id'), (select max(id) from users))`.execute(db);
      }
    } catch (err) {
      // Another process booting at the same moment created root first.
      if (await findUserById(db, 1)) return { secretKeyBase, generatedRootPassword: null };
      throw err;
    }
    if (opts.rootToken) {
      await insertPersonalAccessToken(db, {
        userId: 1, name: 'initial', tokenDigest: digest(opts.rootToken), scopes: ROOT_TOKEN_SCOPES,
        impersonation: false, expiresAt: null,
      });
    }
  }
  return { secretKeyBase, generatedRootPassword };
}
