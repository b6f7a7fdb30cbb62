/**
 * A counter of writes through this database handle, read by caches of derived values (the
 * capped pagination counts, remembered rows) to know whether anything may have changed since they
 * computed. Every statement that is not a SELECT moves it, both before it runs and after it
 * finishes, so a computation that overlaps a write always sees the counter move. (Raw SQL counts
 * as a write.)
 *
 * A transaction's writes become visible to other connections only when it commits: on
 * PostgreSQL a read on another pooled connection between the transaction's last statement and
 * its commit sees the old rows. So the commit moves the counter too (database.ts wraps the
 * driver), and a value read in that window is not kept past it.
 */
import type {
  KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryId, QueryResult, RootOperationNode,
  UnknownRow,
} from 'kysely';

export class WriteEpoch implements KyselyPlugin {
  value = 0;
  /**
   * Told after each write has finished and after each commit: cluster/cluster.ts announces
   * them to the other server processes that share the database.
   */
  onWrite: (() => void) | null = null;
  private readonly writing = new WeakSet<QueryId>();

  /** Another process wrote to the shared database: nothing remembered before now may be used. */
  movedElsewhere(): void {
    this.value += 1;
  }

  /** A transaction on this handle committed. */
  committed(): void {
    this.value += 1;
    this.onWrite?.();
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind !== 'SelectQueryNode') {
      this.value += 1;
      this.writing.add(args.queryId);
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.writing.has(args.queryId)) {
      this.value += 1;
      this.onWrite?.();
    }
    return args.result;
  }
}
