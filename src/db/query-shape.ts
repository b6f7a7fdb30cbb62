/**
 * Lists compiled once per filter shape. A list's filters are many, but a request uses a few, and
 * which ones (not their values) decide the SQL: the shape. A finder describes a request as a
 * QueryShape, recording for each filter that applies a token for the key and a step that adds
 * it to a Kysely query, with its values bound by position (`arg`). Only the first request of a
 * shape runs the steps and compiles them (db/prepared.ts); the next ones bind their values to the
 * remembered statement. Building and compiling a list query with Kysely cost more than SQLite
 * took to run it (issue 17: ~70 µs of a users page, twice with the count).
 *
 *   const shape = new QueryShape<UsersQuery>();
 *   if (p.username !== undefined) {
 *     const username = shape.arg(p.username.toLowerCase());
 *     shape.step('username', (qb) => qb.where(sql`lower(users.username)`, '=', username));
 *   }
 */
import type { Compilable, Kysely } from 'kysely';
import { param, prepared, readTogether, type Prepared, type Read } from './prepared.ts';
import type { DB } from './types.ts';

/** What a step adds: a filter (every query of the list), the order, or columns of a page only. */
export type StepKind = 'filter' | 'order' | 'select';
const ALL_KINDS: readonly StepKind[] = ['filter', 'order', 'select'];

export class QueryShape<QB> {
  private readonly tokens: string[] = [];
  private readonly steps: { kind: StepKind; apply: (qb: QB) => QB }[] = [];
  /** The values of this request, in the order the shape's steps bind them. */
  readonly args: unknown[] = [];
  private readonly inline: boolean;

  /**
   * `inline`: the steps take the values themselves, for a query built and run once with Kysely
   * (a caller that narrows it further, as GraphQL's users connection does).
   */
  constructor(opts: { inline?: boolean } = {}) {
    this.inline = opts.inline === true;
  }

  /** Binds `value` at the next position; the placeholder stands for it in a step's query. */
  arg<T>(value: T): T {
    this.args.push(value);
    return this.inline ? value : param<T>(this.args.length - 1);
  }

  /**
   * Adds a filter. `token` names what the step adds, including every choice that changes its SQL
   * (not its values): two requests with the same tokens must build the same statement.
   */
  step(token: string, apply: (qb: QB) => QB, kind: StepKind = 'filter'): void {
    this.tokens.push(kind === 'filter' ? token : `${kind}:${token}`);
    this.steps.push({ kind, apply });
  }

  /** Adds the order (ShapedList reads a deep page's rows in it again, without the filters). */
  order(token: string, apply: (qb: QB) => QB): void {
    this.step(token, apply, 'order');
  }

  /** Adds columns a page shows (not the count, nor the ids a deep page walks). */
  select(token: string, apply: (qb: QB) => QB): void {
    this.step(token, apply, 'select');
  }

  get key(): string {
    return this.tokens.join('|');
  }

  apply(qb: QB, kinds: readonly StepKind[] = ALL_KINDS): QB {
    let q = qb;
    for (const s of this.steps) if (kinds.includes(s.kind)) q = s.apply(q);
    return q;
  }
}

/** Shapes of one list are few, but nothing outside the code bounds them: past this, start over. */
const MAX_SHAPES = 500;

/**
 * Statements of one family (a list's page, its count), one per shape key, compiled on first use.
 * `build` receives the first request's shape: its steps bind positions, not that request's values.
 */
export class ShapedStatements<QB, O> {
  private readonly byKey = new Map<string, Prepared<O>>();
  private readonly build: (db: Kysely<DB>, shape: QueryShape<QB>, size: number) => Compilable<O>;

  /** `size`: a small number written into the SQL rather than bound (a page's LIMIT), part of the key. */
  constructor(build: (db: Kysely<DB>, shape: QueryShape<QB>, size: number) => Compilable<O>) {
    this.build = build;
  }

  of(shape: QueryShape<QB>, size = 0): Prepared<O> {
    const key = `${size}:${shape.key}`;
    let statement = this.byKey.get(key);
    if (!statement) {
      if (this.byKey.size >= MAX_SHAPES) this.byKey.clear();
      statement = prepared((db) => this.build(db, shape, size));
      this.byKey.set(key, statement);
    }
    return statement;
  }
}

/** Ids per statement of ByIds; a longer list runs in several. */
const MAX_IDS = 500;

/**
 * Rows looked up by a list of ids (a page's pipelines, users, runners), compiled once per number
 * of distinct ids: `build` receives that many placeholders for its `IN (…)`.
 */
export class ByIds<O> {
  private readonly bySize = new Map<number, Prepared<O>>();
  private readonly build: (db: Kysely<DB>, ids: number[]) => Compilable<O>;

  constructor(build: (db: Kysely<DB>, ids: number[]) => Compilable<O>) {
    this.build = build;
  }

  /** The statements that read these ids (one for each 500 distinct ids; none for no ids). */
  reads(ids: Iterable<number>): Read<O>[] {
    const distinct = [...new Set(ids)];
    const out: Read<O>[] = [];
    for (let start = 0; start < distinct.length; start += MAX_IDS) {
      const chunk = distinct.slice(start, start + MAX_IDS);
      let statement = this.bySize.get(chunk.length);
      if (!statement) {
        const placeholders = chunk.map((_, i) => param<number>(i));
        statement = prepared((d) => this.build(d, placeholders));
        this.bySize.set(chunk.length, statement);
      }
      out.push({ statement, args: chunk });
    }
    return out;
  }

  async all(db: Kysely<DB>, ids: Iterable<number>): Promise<O[]> {
    const out: O[] = [];
    for (const { statement, args } of this.reads(ids)) out.push(...(await statement.all(db, args)));
    return out;
  }
}

/**
 * Rows of several ByIds at once, each lookup's rows in its own list: on PostgreSQL in one round
 * trip (readTogether), the lookups behind a page of jobs being four.
 */
export async function byIdsTogether<T extends unknown[]>(
  db: Kysely<DB>, lookups: { [K in keyof T]: [ByIds<T[K]>, Iterable<number>] },
): Promise<{ [K in keyof T]: T[K][] }> {
  const groups = (lookups as [ByIds<unknown>, Iterable<number>][]).map(([byIds, ids]) => byIds.reads(ids));
  const rows = await readTogether(db, groups.flat());
  let next = 0;
  return groups.map((reads) => reads.flatMap(() => rows[next++])) as { [K in keyof T]: T[K][] };
}
