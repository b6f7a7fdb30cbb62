/**
 * One ghost user (reference §1.8; issue 35, item 1): user deletions that run at once may each find
 * no ghost and create one. A partial unique index on the ghost user type (5) makes the second
 * creation fail, and src/domain/users/ghost-user.ts then takes the first one's.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create unique index users_one_ghost on users (user_type) where user_type = 5`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('users_one_ghost').execute();
}
