/**
 * Internal ids (the Service's InternalId): per-scope sequences such as a project's pipeline
 * `iid`s, given out by one counter row per (scope, usage) (migration 2026-11-26T1700). Never
 * max(iid) + 1: two transactions read the same max and the second insert breaks the iid's unique
 * index (issue 35, item 1).
 *
 * `nextIid` is one statement that creates the counter or advances it and returns the new value
 * (`INSERT … ON CONFLICT … DO UPDATE … RETURNING`, PostgreSQL and SQLite ≥ 3.35 alike). It runs in
 * the transaction that inserts the numbered row: the counter row stays locked until that commits
 * (PostgreSQL's row lock; SQLite's write lock is the whole file), so a concurrent allocation in
 * the same scope waits and then sees the advanced value, and a rolled-back creation gives its
 * number back. Deleting numbered rows never touches the counter, so their iids are not given again
 * (the Service's behaviour: a deleted pipeline's iid stays used).
 *
 * The value written when the counter is created, and the floor of every advance, is one more than
 * the greatest iid the scope's rows already hold: rows numbered before the counter existed (or
 * past it) can never be collided with, and the probe is one read of the (scope, iid) unique index.
 */
import { sql, type Expression, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';

type ScopeColumn = 'project_id' | 'namespace_id';

interface UsageDefinition {
  /** Whose sequence it is: a project's or a namespace's (a group's). */
  scope: ScopeColumn;
  /** The greatest iid the scope's rows hold (null when none). */
  greatest(trx: Transaction<DB>, scopeId: number): Expression<number | null>;
}

/** What is numbered, by the Service's usage names (Enums::InternalId). Add a usage with its table. */
const USAGES = {
  ci_pipelines: {
    scope: 'project_id',
    greatest: (trx, projectId) => trx.selectFrom('ci_pipelines').select((eb) => eb.fn.max('iid').as('iid'))
      .where('project_id', '=', projectId).$asScalar(),
  },
  issues: {
    scope: 'project_id',
    greatest: (trx, projectId) => trx.selectFrom('issues').select((eb) => eb.fn.max('iid').as('iid'))
      .where('project_id', '=', projectId).$asScalar(),
  },
  merge_requests: {
    scope: 'project_id',
    greatest: (trx, projectId) => trx.selectFrom('merge_requests').select((eb) => eb.fn.max('iid').as('iid'))
      .where('project_id', '=', projectId).$asScalar(),
  },
  deployments: {
    scope: 'project_id',
    greatest: (trx, projectId) => trx.selectFrom('deployments').select((eb) => eb.fn.max('iid').as('iid'))
      .where('project_id', '=', projectId).$asScalar(),
  },
  // A project's milestones and a group's are numbered apart, as the Service numbers them.
  milestones: {
    scope: 'project_id',
    greatest: (trx, projectId) => trx.selectFrom('milestones').select((eb) => eb.fn.max('iid').as('iid'))
      .where('project_id', '=', projectId).$asScalar(),
  },
  group_milestones: {
    scope: 'namespace_id',
    greatest: (trx, groupId) => trx.selectFrom('milestones').select((eb) => eb.fn.max('iid').as('iid'))
      .where('group_id', '=', groupId).$asScalar(),
  },
} as const satisfies Record<string, UsageDefinition>;

export type IidUsage = keyof typeof USAGES;

/** The scope a usage is counted in: `{ project_id }` for a project's sequence, `{ namespace_id }` for a group's. */
export type IidScope<U extends IidUsage> = { [K in (typeof USAGES)[U]['scope']]: number };

/** The next iid of `usage` in `scope`, taken for good once `trx` commits. */
export async function nextIid<U extends IidUsage>(trx: Transaction<DB>, scope: IidScope<U>, usage: U): Promise<number> {
  const def: UsageDefinition = USAGES[usage];
  const scopeId = (scope as Record<ScopeColumn, number>)[def.scope];
  const floor = sql<number>`coalesce(${def.greatest(trx, scopeId)}, 0) + 1`;
  const row = await trx.insertInto('internal_ids')
    .values({
      project_id: def.scope === 'project_id' ? scopeId : null,
      namespace_id: def.scope === 'namespace_id' ? scopeId : null,
      usage,
      last_value: floor,
    })
    // The conflict target is the scope's partial unique index, named with its predicate.
    .onConflict((oc) => oc.columns([def.scope, 'usage']).where(def.scope, 'is not', null).doUpdateSet({
      last_value: sql<number>`case when internal_ids.last_value >= excluded.last_value
        then internal_ids.last_value + 1 else excluded.last_value end`,
    }))
    .returning('last_value')
    .executeTakeFirstOrThrow();
  return Number(row.last_value);
}
