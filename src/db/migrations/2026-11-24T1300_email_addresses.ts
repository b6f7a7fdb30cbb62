/**
 * One address, one user (issue 13; reference §11 "Email uniqueness … checks secondary emails"):
 * every primary (users.email) and secondary (emails.email) address also lives, lower-cased, in
 * `email_addresses`, whose primary key is the address. Two requests racing to give one address
 * to two users (a secondary of one, the primary of another) cannot both commit: the second
 * insert of the key waits for the first transaction and then fails as a unique violation, which
 * the application turns into the Service's 400/409.
 *
 * Triggers keep the table, so every write of users.email or emails (today's and any route added
 * later, the bootstrap's root and ghost users included) claims its address in the same statement,
 * hence in the same transaction. A user may hold one address twice (a primary that is also one of
 * their own secondaries); the row is released only when neither refers to it any more.
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres } from './_schema.ts';

const TAKEN = 'UNIQUE constraint failed: email_addresses.address';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('email_addresses')
    .addColumn('address', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('email_addresses_user').on('email_addresses').columns(['user_id']).execute();

  // Existing rows first (a pair that already collides keeps its first claimant).
  if (isPostgres(db)) {
    await sql`insert into email_addresses (address, user_id) select lower(email), id from users order by id on conflict do nothing`.execute(db);
    await sql`insert into email_addresses (address, user_id) select lower(email), user_id from emails order by id on conflict do nothing`.execute(db);
    await postgresTriggers(db);
  } else {
    await sql`insert or ignore into email_addresses (address, user_id) select lower(email), id from users order by id`.execute(db);
    await sql`insert or ignore into email_addresses (address, user_id) select lower(email), user_id from emails order by id`.execute(db);
    await sqliteTriggers(db);
  }
}

async function postgresTriggers(db: Kysely<any>): Promise<void> {
  // READ COMMITTED: the insert waits for a concurrent claimant of the same key; after it commits,
  // the insert does nothing and the following select (a new snapshot) sees the other owner.
  await sql.raw(`
    create function kiln_claim_email(addr text, owner integer) returns void language plpgsql as $$
    begin
      insert into email_addresses (address, user_id) values (lower(addr), owner) on conflict (address) do nothing;
      if (select user_id from email_addresses where address = lower(addr)) <> owner then
        raise exception 'duplicate key value violates unique constraint "email_addresses_pkey"'
          using errcode = 'unique_violation', constraint = 'email_addresses_pkey', table = 'email_addresses';
      end if;
    end $$`).execute(db);
  await sql.raw(`
    create function kiln_release_email(addr text, owner integer) returns void language plpgsql as $$
    begin
      delete from email_addresses a where a.address = lower(addr) and a.user_id = owner
        and not exists (select 1 from users u where u.id = owner and lower(u.email) = lower(addr))
        and not exists (select 1 from emails e where e.user_id = owner and lower(e.email) = lower(addr));
    end $$`).execute(db);
  await sql.raw(`
    create function kiln_users_email_address() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        perform kiln_claim_email(new.email, new.id);
      elsif lower(new.email) <> lower(old.email) then
        perform kiln_claim_email(new.email, new.id);
        perform kiln_release_email(old.email, old.id);
      end if;
      return null;
    end $$`).execute(db);
  await sql.raw(`
    create function kiln_emails_email_address() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' or tg_op = 'UPDATE' then
        perform kiln_claim_email(new.email, new.user_id);
      end if;
      if tg_op = 'DELETE' or tg_op = 'UPDATE' then
        perform kiln_release_email(old.email, old.user_id);
      end if;
      return null;
    end $$`).execute(db);
  await sql`create trigger users_email_address after insert or update of email on users
    for each row execute function kiln_users_email_address()`.execute(db);
  await sql`create trigger emails_email_address after insert or update of email, user_id or delete on emails
    for each row execute function kiln_emails_email_address()`.execute(db);
}

async function sqliteTriggers(db: Kysely<any>): Promise<void> {
  // SQLite runs one write transaction at a time, so claim-then-check inside the statement is
  // already serial. RAISE(ABORT) reports SQLITE_CONSTRAINT_TRIGGER with the UNIQUE text below,
  // which isUniqueViolation (src/db/constraints.ts) recognises.
  const claim = (addr: string, owner: string) => `
      insert or ignore into email_addresses (address, user_id) values (lower(${addr}), ${owner});
      select raise(abort, '${TAKEN}') where (select user_id from email_addresses where address = lower(${addr})) <> ${owner};`;
  const release = (addr: string, owner: string) => `
      delete from email_addresses where address = lower(${addr}) and user_id = ${owner}
        and not exists (select 1 from users u where u.id = ${owner} and lower(u.email) = lower(${addr}))
        and not exists (select 1 from emails e where e.user_id = ${owner} and lower(e.email) = lower(${addr}));`;
  await sql.raw(`create trigger users_email_address_insert after insert on users begin ${claim('new.email', 'new.id')} end`).execute(db);
  await sql.raw(`create trigger users_email_address_update after update of email on users
    when lower(new.email) <> lower(old.email) begin ${claim('new.email', 'new.id')} ${release('old.email', 'old.id')} end`).execute(db);
  await sql.raw(`create trigger emails_email_address_insert after insert on emails begin ${claim('new.email', 'new.user_id')} end`).execute(db);
  await sql.raw(`create trigger emails_email_address_update after update of email, user_id on emails
    begin ${claim('new.email', 'new.user_id')} ${release('old.email', 'old.user_id')} end`).execute(db);
  await sql.raw(`create trigger emails_email_address_delete after delete on emails begin ${release('old.email', 'old.user_id')} end`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger users_email_address on users`.execute(db);
    await sql`drop trigger emails_email_address on emails`.execute(db);
    for (const f of ['kiln_users_email_address()', 'kiln_emails_email_address()', 'kiln_claim_email(text, integer)', 'kiln_release_email(text, integer)']) {
      await sql.raw(`drop function ${f}`).execute(db);
    }
  } else {
    for (const t of ['users_email_address_insert', 'users_email_address_update', 'emails_email_address_insert', 'emails_email_address_update', 'emails_email_address_delete']) {
      await sql.raw(`drop trigger ${t}`).execute(db);
    }
  }
  await db.schema.dropTable('email_addresses').execute();
}
