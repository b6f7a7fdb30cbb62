/**
 * Project topics as the Service keeps them (topics, project_topics): a topic per name, unique
 * whatever the case (Projects::Topic validates the name's uniqueness case-insensitively), and a
 * link per project and topic. Projects keep their topic names in projects.topics (what the entity
 * shows); the links are what the topics API counts and merges. Existing projects' topics become
 * topics and links here, so the API sees them from the first boot after the upgrade.
 *
 * The list is ordered by how many non-private projects carry a topic, which only counter
 * columns with an index can serve without sorting every topic. The database keeps the counters:
 * triggers recount a topic whenever one of its links comes or goes (project and group deletions
 * included, which remove links by cascade) and whenever a linked project's visibility changes.
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres, withId } from './_schema.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('topics'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('total_projects_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('non_private_projects_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('topics_name_lower').on('topics').unique().expression(sql`lower(name)`).execute();
  await withId(db, db.schema.createTable('project_topics'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('topic_id', 'integer', (c) => c.notNull().references('topics.id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('project_topics_project_topic').on('project_topics').columns(['project_id', 'topic_id']).unique().execute();
  await db.schema.createIndex('project_topics_topic').on('project_topics').columns(['topic_id', 'project_id']).execute();
  await db.schema.createIndex('topics_popular').on('topics').expression(sql`non_private_projects_count desc, id`).execute();
  await db.schema.createIndex('topics_unused').on('topics').columns(['total_projects_count', 'id']).execute();
  await createCounterTriggers(db);

  const now = new Date().toISOString();
  const projects = await db.selectFrom('projects').select(['id', 'topics']).where('topics', '<>', '[]').execute();
  for (const p of projects as { id: number; topics: string }[]) {
    for (const name of JSON.parse(p.topics) as string[]) {
      let topic = await db.selectFrom('topics').select('id').where(sql`lower(name)`, '=', name.toLowerCase()).executeTakeFirst();
      if (!topic) {
        topic = await db.insertInto('topics').values({ name, title: name, description: null, created_at: now, updated_at: now })
          .returning('id').executeTakeFirstOrThrow();
      }
      await db.insertInto('project_topics').values({ project_id: p.id, topic_id: (topic as { id: number }).id })
        .onConflict((oc) => oc.columns(['project_id', 'topic_id']).doNothing()).execute();
    }
  }
}

/** A topic's counts from its links, as one SET list (the body of every trigger below). */
const RECOUNT = (topic: string) => sql.raw(`update topics set
  total_projects_count = (select count(*) from project_topics where project_topics.topic_id = ${topic}),
  non_private_projects_count = (select count(*) from project_topics inner join projects on projects.id = project_topics.project_id
    where project_topics.topic_id = ${topic} and projects.visibility_level > 0)
  where topics.id = ${topic}`);

async function createCounterTriggers(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`create function kiln_topic_link_counts() returns trigger language plpgsql as $$
      begin
        if tg_op = 'DELETE' then ${RECOUNT('old.topic_id')}; return old; end if;
        ${RECOUNT('new.topic_id')}; return new;
      end $$`.execute(db);
    await sql`create trigger project_topics_counts after insert or delete on project_topics
      for each row execute function kiln_topic_link_counts()`.execute(db);
    await sql`create function kiln_topic_visibility_counts() returns trigger language plpgsql as $$
      declare linked integer;
      begin
        for linked in select topic_id from project_topics where project_id = new.id loop ${RECOUNT('linked')}; end loop;
        return new;
      end $$`.execute(db);
    await sql`create trigger projects_topic_counts after update of visibility_level on projects
      for each row when (old.visibility_level is distinct from new.visibility_level) execute function kiln_topic_visibility_counts()`
      .execute(db);
    return;
  }
  await sql`create trigger project_topics_counts_insert after insert on project_topics begin ${RECOUNT('new.topic_id')}; end`.execute(db);
  await sql`create trigger project_topics_counts_delete after delete on project_topics begin ${RECOUNT('old.topic_id')}; end`.execute(db);
  await sql`create trigger projects_topic_counts after update of visibility_level on projects
    when old.visibility_level is not new.visibility_level
    begin ${sql.raw(`update topics set
      total_projects_count = (select count(*) from project_topics where project_topics.topic_id = topics.id),
      non_private_projects_count = (select count(*) from project_topics inner join projects on projects.id = project_topics.project_id
        where project_topics.topic_id = topics.id and projects.visibility_level > 0)
      where topics.id in (select topic_id from project_topics where project_id = new.id)`)}; end`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await sql`drop trigger if exists projects_topic_counts on projects`.execute(db);
  else await sql`drop trigger if exists projects_topic_counts`.execute(db);
  await db.schema.dropTable('project_topics').execute();
  await db.schema.dropTable('topics').execute();
  if (isPostgres(db)) {
    await sql`drop function if exists kiln_topic_link_counts()`.execute(db);
    await sql`drop function if exists kiln_topic_visibility_counts()`.execute(db);
  }
}
