/**
 * A counter of writes through this database handle, read by caches of derived values (the
 * capped pagination counts) to know whether anything may have changed since they computed. Every
 * statement that is not a SELECT moves it, both before it runs and after it finishes, so a
 * computation that overlaps a write always sees the counter move. (Raw SQL counts as a write.)
 */
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryId, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

export class WriteEpoch implements KyselyPlugin {
  value = 0;
  private readonly writing = new WeakSet<QueryId>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind !== 'SelectQueryNode') {
      this.value += 1;
      this.writing.add(args.queryId);
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.writing.has(args.queryId)) this.value += 1;
    return args.result;
  }
}
