/**
 * The import graph of src/ (issue 27): no circles, and arrows that point down. The domain (and
 * the database layer under it) never imports an interface above it — HTTP, the cluster, web
 * pages, OAuth, GraphQL, SCIM, git's transport, the workers or the runner — so a domain function
 * can be called from any of them. Read with madge, the graph every file's imports make.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import madge from 'madge';

const ABOVE_THE_DOMAIN = ['http/', 'cluster/', 'web/', 'oauth/', 'graphql/', 'scim/', 'git/', 'workers/', 'runner/', 'app.ts', 'server.ts', 'main.ts'];

describe('the import graph of src/', { timeout: 180_000 }, () => {
  let graph: Record<string, string[]>;
  let circular: string[][];

  it('is read whole', async () => {
    const result = await madge('src', { fileExtensions: ['ts'], tsConfig: 'tsconfig.json' });
    graph = result.obj();
    circular = result.circular();
    // kysely/migration is a package's subpath, the only import madge leaves unresolved.
    assert.deepEqual(result.warnings().skipped.filter((s) => !s.startsWith('kysely/')), []);
    assert.ok(Object.keys(graph).length > 300, 'every source file is in the graph');
    assert.ok(graph['http/route.ts']?.includes('http/input/params.ts'), 'imports between files are read');
  });

  it('has no import cycle', () => {
    assert.deepEqual(circular.map((c) => c.join(' -> ')), []);
  });

  it('has no import from the domain or the database layer into a layer above them', () => {
    const upward = Object.entries(graph)
      .filter(([file]) => file.startsWith('domain/') || file.startsWith('db/'))
      .flatMap(([file, deps]) => deps.filter((d) => ABOVE_THE_DOMAIN.some((p) => d.startsWith(p))).map((d) => `${file} -> ${d}`));
    assert.deepEqual(upward, []);
  });
});
