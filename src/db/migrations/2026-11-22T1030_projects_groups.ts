/**
 * Projects, groups, members and snippets, with the repository fields every container carries
 * (reference §4: storage moves read `repository_storage` and flip `read_only`).
 *
 * Groups are rows of `namespaces` with kind 'group'; they gain the storage fields of their wiki
 * repository here. Members are polymorphic as in the Service: `source_type` 'Project' or
 * 'Namespace' (a group) with `source_id`, so they carry no foreign key and are deleted with their
 * source by the code that deletes it, in the same transaction.
 *
 * `disk_path` is a repository's path relative to its shard, fixed when the repository is created,
 * so renaming a project or namespace never has to move a repository on disk.
 */
import { sql, type Kysely } from 'kysely';
import { withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('namespaces').addColumn('repository_storage', 'text').execute();
  await db.schema.alterTable('namespaces').addColumn('wiki_disk_path', 'text').execute();
  await db.schema.alterTable('namespaces').addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('namespaces').addColumn('created_by_id', 'integer').execute();
  await db.schema.createIndex('namespaces_kind_visibility').on('namespaces').columns(['kind', 'visibility_level', 'id']).execute();
  await sql`create index namespaces_kind_name on namespaces (kind, lower(name), id)`.execute(db);
  await db.schema.createIndex('namespaces_parent').on('namespaces').columns(['parent_id', 'id']).execute();
  await db.schema.createIndex('namespaces_storage').on('namespaces').columns(['repository_storage', 'id']).execute();

  await withId(db, db.schema.createTable('projects'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('namespace_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('creator_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('description', 'text')
    // 0 private, 10 internal, 20 public (Gitlab::VisibilityLevel).
    .addColumn('visibility_level', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('default_branch', 'text')
    .addColumn('readme_path', 'text')
    .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('repository_storage', 'text', (c) => c.notNull())
    .addColumn('disk_path', 'text', (c) => c.notNull())
    .addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('empty_repo', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('pending_delete', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_activity_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Names and paths are unique within a namespace, without regard to case.
  await sql`create unique index projects_namespace_path on projects (namespace_id, lower(path))`.execute(db);
  await sql`create unique index projects_namespace_name on projects (namespace_id, lower(name))`.execute(db);
  // One index per list order and filter of GET /projects (id breaks ties).
  await db.schema.createIndex('projects_visibility').on('projects').columns(['visibility_level', 'id']).execute();
  await db.schema.createIndex('projects_storage').on('projects').columns(['repository_storage', 'id']).execute();
  await db.schema.createIndex('projects_created_at').on('projects').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('projects_updated_at').on('projects').columns(['updated_at', 'id']).execute();
  await db.schema.createIndex('projects_last_activity_at').on('projects').columns(['last_activity_at', 'id']).execute();
  await db.schema.createIndex('projects_creator').on('projects').columns(['creator_id', 'id']).execute();
  await db.schema.createIndex('projects_archived').on('projects').columns(['archived', 'id']).execute();
  await db.schema.createIndex('projects_name').on('projects').columns(['name', 'id']).execute();
  await db.schema.createIndex('projects_path').on('projects').columns(['path', 'id']).execute();

  await withId(db, db.schema.createTable('members'))
    .addColumn('source_type', 'text', (c) => c.notNull()) // 'Project' | 'Namespace'
    .addColumn('source_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('access_level', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('created_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('members_source_user').on('members').columns(['source_type', 'source_id', 'user_id']).unique().execute();
  await db.schema.createIndex('members_user').on('members').columns(['user_id', 'source_type', 'source_id', 'access_level']).execute();
  await db.schema.createIndex('members_source_level').on('members').columns(['source_type', 'source_id', 'access_level']).execute();

  await withId(db, db.schema.createTable('snippets'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('visibility_level', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('repository_storage', 'text', (c) => c.notNull())
    .addColumn('disk_path', 'text', (c) => c.notNull())
    .addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('snippets_author').on('snippets').columns(['author_id', 'id']).execute();
  await db.schema.createIndex('snippets_visibility').on('snippets').columns(['visibility_level', 'id']).execute();
  await db.schema.createIndex('snippets_storage').on('snippets').columns(['repository_storage', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['snippets', 'members', 'projects']) await db.schema.dropTable(t).execute();
  for (const i of ['namespaces_kind_visibility', 'namespaces_kind_name', 'namespaces_parent', 'namespaces_storage']) {
    await db.schema.dropIndex(i).execute();
  }
  for (const c of ['repository_storage', 'wiki_disk_path', 'read_only', 'created_by_id']) {
    await db.schema.alterTable('namespaces').dropColumn(c).execute();
  }
}
