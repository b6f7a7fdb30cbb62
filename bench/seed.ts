/**
 * Seeds a kiln database for benchmarks: migrations, root with a known token, and `count` users
 * (each with a personal namespace), inserted in chunks inside one transaction.
 */
import type { Kysely } from 'kysely';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import type { DB } from '../src/db/types.ts';
import { bootstrapInstance } from '../src/domain/instance/bootstrap.ts';
import { insertPersonalAccessToken } from '../src/domain/tokens/tokens.queries.ts';
import { digest } from '../src/domain/tokens/secret.ts';
import { findUserByUsername } from '../src/domain/users/users.queries.ts';

const CHUNK = 500;

export async function seedUsers(db: Kysely<DB>, count: number): Promise<void> {
  const created = new Date('2026-01-01T00:00:00Z').getTime();
  await db.transaction().execute(async (trx) => {
    for (let start = 0; start < count; start += CHUNK) {
      const n = Math.min(CHUNK, count - start);
      const users = Array.from({ length: n }, (_, i) => {
        const k = start + i;
        const at = new Date(created + k * 1000).toISOString();
        return {
          username: `bench${k}`, email: `bench${k}@example.com`, name: `Bench User ${k}`,
          bio: 'Seeded for benchmarks', organization: 'kiln', job_title: 'Engineer',
          created_at: at, updated_at: at, confirmed_at: at,
        };
      });
      const rows = await trx.insertInto('users').values(users).returning(['id', 'username', 'name', 'created_at']).execute();
      await trx.insertInto('namespaces').values(rows.map((r) => ({
        name: r.name, path: r.username, kind: 'user' as const, owner_id: r.id, created_at: r.created_at, updated_at: r.created_at,
      }))).execute();
    }
  });
}

/** Seeds the database; `userToken` becomes an api token of the plain user `bench0`. */
export async function seedDatabase(opts: { dataDir: string; databaseUrl: string | null; users: number; rootToken: string; userToken: string }): Promise<void> {
  const database = openDatabase({ dataDir: opts.dataDir, databaseUrl: opts.databaseUrl });
  try {
    await migrateToLatest(database.db);
    await bootstrapInstance(database.db, { rootPassword: 'bench-root-password', rootToken: opts.rootToken, dialect: database.dialect });
    await seedUsers(database.db, opts.users);
    const plain = await findUserByUsername(database.db, 'bench0');
    if (!plain) throw new Error('seeding created no users');
    await insertPersonalAccessToken(database.db, {
      userId: plain.id, name: 'bench', tokenDigest: digest(opts.userToken), scopes: 'api', impersonation: false, expiresAt: null,
    });
  } finally {
    await database.close();
  }
}
