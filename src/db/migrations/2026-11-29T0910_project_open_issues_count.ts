/**
 * The project entity's `open_issues_count` (Projects::OpenIssuesCountService): open issues, all of
 * them for those who may read confidential issues, the non-confidential ones for everyone else.
 * The Service caches both counts per project; kiln keeps them as counter columns the database
 * maintains, so a list of projects reads them with the rows: triggers add or take away an issue's
 * share when it is created, deleted, opened or closed, made confidential or public, or moved to
 * another project. Existing projects are counted here once.
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres } from './_schema.ts';

/** `sign` times the share (`row` is new or old) on its project's two counters. */
const SHARE = (row: 'new' | 'old', sign: '+' | '-') => sql.raw(`update projects set
  open_issues_count = open_issues_count ${sign} 1,
  open_public_issues_count = open_public_issues_count ${sign} (case when ${row}.confidential = 0 then 1 else 0 end)
  where projects.id = ${row}.project_id and ${row}.state = 'opened'`);

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('open_issues_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('projects').addColumn('open_public_issues_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await sql`update projects set
    open_issues_count = (select count(*) from issues where issues.project_id = projects.id and issues.state = 'opened'),
    open_public_issues_count = (select count(*) from issues where issues.project_id = projects.id and issues.state = 'opened'
      and issues.confidential = 0)`.execute(db);
  if (isPostgres(db)) {
    await sql`create function kiln_project_open_issues() returns trigger language plpgsql as $$
      begin
        if tg_op in ('DELETE', 'UPDATE') then ${SHARE('old', '-')}; end if;
        if tg_op in ('INSERT', 'UPDATE') then ${SHARE('new', '+')}; return new; end if;
        return old;
      end $$`.execute(db);
    await sql`create trigger issues_open_count_insert_delete after insert or delete on issues
      for each row execute function kiln_project_open_issues()`.execute(db);
    await sql`create trigger issues_open_count_update after update of state, confidential, project_id on issues
      for each row when (old.state is distinct from new.state or old.confidential is distinct from new.confidential
        or old.project_id is distinct from new.project_id)
      execute function kiln_project_open_issues()`.execute(db);
    return;
  }
  await sql`create trigger issues_open_count_insert after insert on issues begin ${SHARE('new', '+')}; end`.execute(db);
  await sql`create trigger issues_open_count_delete after delete on issues begin ${SHARE('old', '-')}; end`.execute(db);
  await sql`create trigger issues_open_count_update after update of state, confidential, project_id on issues
    when old.state is not new.state or old.confidential is not new.confidential or old.project_id is not new.project_id
    begin ${SHARE('old', '-')}; ${SHARE('new', '+')}; end`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger if exists issues_open_count_insert_delete on issues`.execute(db);
    await sql`drop trigger if exists issues_open_count_update on issues`.execute(db);
    await sql`drop function if exists kiln_project_open_issues()`.execute(db);
  } else {
    for (const name of ['issues_open_count_insert', 'issues_open_count_delete', 'issues_open_count_update']) {
      await sql`drop trigger if exists ${sql.raw(name)}`.execute(db);
    }
  }
  await db.schema.alterTable('projects').dropColumn('open_public_issues_count').execute();
  await db.schema.alterTable('projects').dropColumn('open_issues_count').execute();
}
