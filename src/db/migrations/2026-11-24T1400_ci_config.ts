/**
 * What the full `.gitlab-ci.yml` adds to pipelines and jobs: the configuration error a failed
 * push pipeline keeps (the Service's `yaml_errors`), and the coverage a job's trace reports
 * (read with the job's `coverage:` regex).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ci_pipelines').addColumn('yaml_errors', 'text').execute();
  await db.schema.alterTable('ci_builds').addColumn('coverage', 'double precision').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ci_builds').dropColumn('coverage').execute();
  await db.schema.alterTable('ci_pipelines').dropColumn('yaml_errors').execute();
}
