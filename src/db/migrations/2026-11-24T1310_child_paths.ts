/**
 * One path, one child (issue 13, "review every other unique across tables rule"): inside a group,
 * a project and a sub-group share the URL space `group/<path>` (the Service's routes table has one
 * unique path for both), but they live in two tables. Every project and every sub-group also
 * claims `(parent namespace, lower(path))` in `namespace_child_paths`, whose primary key makes the
 * second of two racing claims fail as a unique violation (which both create services already
 * answer as `path: has already been taken`). Triggers keep the table, as for email addresses
 * (2026-11-24T1300), so moves and renames added later claim their new path too.
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres } from './_schema.ts';

const TAKEN = 'UNIQUE constraint failed: namespace_child_paths.path';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('namespace_child_paths')
    .addColumn('parent_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    // 'project' or 'group', and that row's id: the claim's owner.
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('namespace_child_paths_pkey', ['parent_id', 'path'])
    .execute();

  if (isPostgres(db)) {
    await sql`insert into namespace_child_paths (parent_id, path, kind, owner_id)
      select parent_id, lower(path), 'group', id from namespaces where parent_id is not null order by id on conflict do nothing`.execute(db);
    await sql`insert into namespace_child_paths (parent_id, path, kind, owner_id)
      select namespace_id, lower(path), 'project', id from projects order by id on conflict do nothing`.execute(db);
    await postgresTriggers(db);
  } else {
    await sql`insert or ignore into namespace_child_paths (parent_id, path, kind, owner_id)
      select parent_id, lower(path), 'group', id from namespaces where parent_id is not null order by id`.execute(db);
    await sql`insert or ignore into namespace_child_paths (parent_id, path, kind, owner_id)
      select namespace_id, lower(path), 'project', id from projects order by id`.execute(db);
    await sqliteTriggers(db);
  }
}

async function postgresTriggers(db: Kysely<any>): Promise<void> {
  await sql.raw(`
    create function kiln_claim_child_path(parent integer, child_path text, child_kind text, child_id integer) returns void language plpgsql as $$
    begin
      insert into namespace_child_paths (parent_id, path, kind, owner_id) values (parent, lower(child_path), child_kind, child_id)
        on conflict (parent_id, path) do nothing;
      if exists (select 1 from namespace_child_paths where parent_id = parent and path = lower(child_path)
                 and (kind <> child_kind or owner_id <> child_id)) then
        raise exception 'duplicate key value violates unique constraint "namespace_child_paths_pkey"'
          using errcode = 'unique_violation', constraint = 'namespace_child_paths_pkey', table = 'namespace_child_paths';
      end if;
    end $$`).execute(db);
  await sql.raw(`
    create function kiln_projects_child_path() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' or (tg_op = 'UPDATE' and (old.namespace_id <> new.namespace_id or lower(old.path) <> lower(new.path))) then
        delete from namespace_child_paths where parent_id = old.namespace_id and path = lower(old.path) and kind = 'project' and owner_id = old.id;
      end if;
      if tg_op = 'INSERT' or (tg_op = 'UPDATE' and (old.namespace_id <> new.namespace_id or lower(old.path) <> lower(new.path))) then
        perform kiln_claim_child_path(new.namespace_id, new.path, 'project', new.id);
      end if;
      return null;
    end $$`).execute(db);
  await sql.raw(`
    create function kiln_namespaces_child_path() returns trigger language plpgsql as $$
    begin
      if (tg_op = 'DELETE' or tg_op = 'UPDATE') and old.parent_id is not null then
        delete from namespace_child_paths where parent_id = old.parent_id and path = lower(old.path) and kind = 'group' and owner_id = old.id;
      end if;
      if (tg_op = 'INSERT' or tg_op = 'UPDATE') and new.parent_id is not null then
        perform kiln_claim_child_path(new.parent_id, new.path, 'group', new.id);
      end if;
      return null;
    end $$`).execute(db);
  await sql`create trigger projects_child_path after insert or update of namespace_id, path or delete on projects
    for each row execute function kiln_projects_child_path()`.execute(db);
  await sql`create trigger namespaces_child_path after insert or update of parent_id, path or delete on namespaces
    for each row execute function kiln_namespaces_child_path()`.execute(db);
}

async function sqliteTriggers(db: Kysely<any>): Promise<void> {
  // One write transaction at a time on SQLite: claim-then-check inside the statement is serial.
  const claim = (parent: string, path: string, kind: string, id: string) => `
      insert or ignore into namespace_child_paths (parent_id, path, kind, owner_id)
        select ${parent}, lower(${path}), '${kind}', ${id} where ${parent} is not null;
      select raise(abort, '${TAKEN}') where exists (select 1 from namespace_child_paths
        where parent_id = ${parent} and path = lower(${path}) and (kind <> '${kind}' or owner_id <> ${id}));`;
  const release = (parent: string, path: string, kind: string, id: string) => `
      delete from namespace_child_paths where parent_id = ${parent} and path = lower(${path}) and kind = '${kind}' and owner_id = ${id};`;
  const moved = (a: string, b: string) => `(old.${a} <> new.${a} or lower(old.${b}) <> lower(new.${b}))`;
  await sql.raw(`create trigger projects_child_path_insert after insert on projects begin ${claim('new.namespace_id', 'new.path', 'project', 'new.id')} end`).execute(db);
  await sql.raw(`create trigger projects_child_path_update after update of namespace_id, path on projects when ${moved('namespace_id', 'path')}
    begin ${release('old.namespace_id', 'old.path', 'project', 'old.id')} ${claim('new.namespace_id', 'new.path', 'project', 'new.id')} end`).execute(db);
  await sql.raw(`create trigger projects_child_path_delete after delete on projects begin ${release('old.namespace_id', 'old.path', 'project', 'old.id')} end`).execute(db);
  await sql.raw(`create trigger namespaces_child_path_insert after insert on namespaces when new.parent_id is not null
    begin ${claim('new.parent_id', 'new.path', 'group', 'new.id')} end`).execute(db);
  // One trigger, release before claim: a rename that only changes case keeps its claim. A NULL
  // parent (a top-level namespace) matches no row and claims none.
  await sql.raw(`create trigger namespaces_child_path_update after update of parent_id, path on namespaces
    begin ${release('old.parent_id', 'old.path', 'group', 'old.id')} ${claim('new.parent_id', 'new.path', 'group', 'new.id')} end`).execute(db);
  await sql.raw(`create trigger namespaces_child_path_delete after delete on namespaces when old.parent_id is not null
    begin ${release('old.parent_id', 'old.path', 'group', 'old.id')} end`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger projects_child_path on projects`.execute(db);
    await sql`drop trigger namespaces_child_path on namespaces`.execute(db);
    for (const f of ['kiln_projects_child_path()', 'kiln_namespaces_child_path()', 'kiln_claim_child_path(integer, text, text, integer)']) {
      await sql.raw(`drop function ${f}`).execute(db);
    }
  } else {
    for (const t of ['projects_child_path_insert', 'projects_child_path_update', 'projects_child_path_delete', 'namespaces_child_path_insert',
      'namespaces_child_path_update', 'namespaces_child_path_delete']) {
      await sql.raw(`drop trigger ${t}`).execute(db);
    }
  }
  await db.schema.dropTable('namespace_child_paths').execute();
}
