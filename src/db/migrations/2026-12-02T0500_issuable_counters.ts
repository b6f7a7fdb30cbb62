/**
 * The counts every issue and merge request entity shows (Gitlab::IssuableMetadata: comments that
 * are not system notes, 👍 and 👎 awards, time spent; for a merge request also its unresolved
 * resolvable notes, which the merge checks read) as counter columns the database maintains, as
 * 2026-11-29T0910 does for a project's open issues. A page of issues or merge requests then reads
 * them with its rows instead of four or five index probes per row (issue 29's and issue 30's
 * Measure); the Service keeps such counter caches too (issues.upvotes_count, blocking_issues_count).
 *
 * Triggers add or take away a note's, an award's or a time log's share when it is created,
 * deleted, or changed in what it counts for, whatever path writes it (the API, moving an issue,
 * import, deleting a user). Existing rows are counted here once. The counts that depend on another
 * row's state (the open issues blocking one, the requests closing one) stay computed.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from './_schema.ts';

type Row = 'new' | 'old';
type Sign = '+' | '-';

const TARGETS = [
  { table: 'issues', type: 'Issue', timelogColumn: 'issue_id' },
  { table: 'merge_requests', type: 'MergeRequest', timelogColumn: 'merge_request_id' },
] as const;

/** A note's share: a comment counts on its issue or request; an unresolved resolvable note on its request. */
const NOTE_SHARE = (row: Row, sign: Sign): string[] => [
  `update issues set user_notes_count = user_notes_count ${sign} 1
    where ${row}.noteable_type = 'Issue' and ${row}.system = 0 and issues.id = ${row}.noteable_id`,
  `update merge_requests set
    user_notes_count = user_notes_count ${sign} (case when ${row}.system = 0 then 1 else 0 end),
    unresolved_notes_count = unresolved_notes_count ${sign}
      (case when ${row}.resolvable = 1 and ${row}.resolved_at is null then 1 else 0 end)
    where ${row}.noteable_type = 'MergeRequest' and merge_requests.id = ${row}.noteable_id`,
];

/** An award's share: 👍 and 👎 only. */
const AWARD_SHARE = (row: Row, sign: Sign): string[] => TARGETS.map((t) => `update ${t.table} set
    upvotes_count = upvotes_count ${sign} (case when ${row}.name = 'thumbsup' then 1 else 0 end),
    downvotes_count = downvotes_count ${sign} (case when ${row}.name = 'thumbsdown' then 1 else 0 end)
    where ${row}.awardable_type = '${t.type}' and ${row}.name in ('thumbsup', 'thumbsdown') and ${t.table}.id = ${row}.awardable_id`);

/** A time log's share: its seconds (negative when time was taken away). */
const TIMELOG_SHARE = (row: Row, sign: Sign): string[] => TARGETS.map((t) => `update ${t.table} set
    total_time_spent = total_time_spent ${sign} ${row}.time_spent where ${t.table}.id = ${row}.${t.timelogColumn}`);

interface Counted {
  table: 'notes' | 'award_emoji' | 'timelogs';
  share: (row: Row, sign: Sign) => string[];
  /** The columns whose change moves the row's share. */
  columns: string[];
}

const COUNTED: Counted[] = [
  { table: 'notes', share: NOTE_SHARE, columns: ['noteable_type', 'noteable_id', 'system', 'resolvable', 'resolved_at'] },
  { table: 'award_emoji', share: AWARD_SHARE, columns: ['awardable_type', 'awardable_id', 'name'] },
  { table: 'timelogs', share: TIMELOG_SHARE, columns: ['issue_id', 'merge_request_id', 'time_spent'] },
];

const statements = (list: string[]): RawBuilder<unknown> => sql.raw(list.map((s) => `${s};`).join('\n'));

export async function up(db: Kysely<any>): Promise<void> {
  for (const t of TARGETS) {
    for (const column of ['user_notes_count', 'upvotes_count', 'downvotes_count']) {
      await db.schema.alterTable(t.table).addColumn(column, 'integer', (c) => c.notNull().defaultTo(0)).execute();
    }
    // A sum of time logs may pass 2^31 seconds where one log cannot.
    await db.schema.alterTable(t.table).addColumn('total_time_spent', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  }
  await db.schema.alterTable('merge_requests').addColumn('unresolved_notes_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();

  for (const t of TARGETS) {
    await sql`update ${sql.table(t.table)} set
      user_notes_count = (select count(*) from notes where notes.noteable_type = ${t.type}
        and notes.noteable_id = ${sql.ref(`${t.table}.id`)} and notes.system = 0),
      upvotes_count = (select count(*) from award_emoji where award_emoji.awardable_type = ${t.type}
        and award_emoji.awardable_id = ${sql.ref(`${t.table}.id`)} and award_emoji.name = 'thumbsup'),
      downvotes_count = (select count(*) from award_emoji where award_emoji.awardable_type = ${t.type}
        and award_emoji.awardable_id = ${sql.ref(`${t.table}.id`)} and award_emoji.name = 'thumbsdown'),
      total_time_spent = coalesce((select sum(timelogs.time_spent) from timelogs
        where ${sql.ref(`timelogs.${t.timelogColumn}`)} = ${sql.ref(`${t.table}.id`)}), 0)`.execute(db);
  }
  await sql`update merge_requests set unresolved_notes_count = (select count(*) from notes
    where notes.noteable_type = 'MergeRequest' and notes.noteable_id = merge_requests.id
      and notes.resolvable = 1 and notes.resolved_at is null)`.execute(db);

  for (const c of COUNTED) {
    if (isPostgres(db)) {
      const changed = c.columns.map((col) => `old.${col} is distinct from new.${col}`).join(' or ');
      await sql`create function ${sql.raw(`kiln_${c.table}_counters`)}() returns trigger language plpgsql as $$
        begin
          if tg_op in ('DELETE', 'UPDATE') then ${statements(c.share('old', '-'))} end if;
          if tg_op in ('INSERT', 'UPDATE') then ${statements(c.share('new', '+'))} return new; end if;
          return old;
        end $$`.execute(db);
      await sql`create trigger ${sql.raw(`${c.table}_counters_insert_delete`)} after insert or delete on ${sql.table(c.table)}
        for each row execute function ${sql.raw(`kiln_${c.table}_counters`)}()`.execute(db);
      await sql`create trigger ${sql.raw(`${c.table}_counters_update`)} after update of ${sql.raw(c.columns.join(', '))}
        on ${sql.table(c.table)} for each row when (${sql.raw(changed)})
        execute function ${sql.raw(`kiln_${c.table}_counters`)}()`.execute(db);
      continue;
    }
    const changed = c.columns.map((col) => `old.${col} is not new.${col}`).join(' or ');
    await sql`create trigger ${sql.raw(`${c.table}_counters_insert`)} after insert on ${sql.table(c.table)}
      begin ${statements(c.share('new', '+'))} end`.execute(db);
    await sql`create trigger ${sql.raw(`${c.table}_counters_delete`)} after delete on ${sql.table(c.table)}
      begin ${statements(c.share('old', '-'))} end`.execute(db);
    await sql`create trigger ${sql.raw(`${c.table}_counters_update`)} after update of ${sql.raw(c.columns.join(', '))}
      on ${sql.table(c.table)} when ${sql.raw(changed)}
      begin ${statements([...c.share('old', '-'), ...c.share('new', '+')])} end`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const c of COUNTED) {
    if (isPostgres(db)) {
      await sql`drop trigger if exists ${sql.raw(`${c.table}_counters_insert_delete`)} on ${sql.table(c.table)}`.execute(db);
      await sql`drop trigger if exists ${sql.raw(`${c.table}_counters_update`)} on ${sql.table(c.table)}`.execute(db);
      await sql`drop function if exists ${sql.raw(`kiln_${c.table}_counters`)}()`.execute(db);
    } else {
      for (const suffix of ['insert', 'delete', 'update']) {
        await sql`drop trigger if exists ${sql.raw(`${c.table}_counters_${suffix}`)}`.execute(db);
      }
    }
  }
  await db.schema.alterTable('merge_requests').dropColumn('unresolved_notes_count').execute();
  for (const t of TARGETS) {
    for (const column of ['total_time_spent', 'downvotes_count', 'upvotes_count', 'user_notes_count']) {
      await db.schema.alterTable(t.table).dropColumn(column).execute();
    }
  }
}
