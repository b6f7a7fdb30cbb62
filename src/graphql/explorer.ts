/**
 * The GraphiQL explorer at `/-/graphql-explorer`, served entirely from kiln: GraphiQL and React
 * come from their npm packages (no outside network, a strict CSP without inline script). A
 * signed-in session gets its CSRF token in a meta tag so the explorer can run mutations.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { csrfTokenFor, readCookie, SESSION_COOKIE } from '../http/auth/session-token.ts';
import { escapeHtml } from '../web/html.ts';

const require = createRequire(import.meta.url);

const ASSETS: Record<string, { file: string; type: string }> = {
  'react.js': {
    file: path.join(path.dirname(require.resolve('react/package.json')), 'umd/react.production.min.js'),
    type: 'text/javascript',
  },
  'react-dom.js': {
    file: path.join(path.dirname(require.resolve('react-dom/package.json')), 'umd/react-dom.production.min.js'),
    type: 'text/javascript',
  },
  'graphiql.js': { file: path.join(path.dirname(require.resolve('graphiql/package.json')), 'graphiql.min.js'), type: 'text/javascript' },
  'graphiql.css': { file: path.join(path.dirname(require.resolve('graphiql/package.json')), 'graphiql.min.css'), type: 'text/css' },
};

/** Starts GraphiQL against /api/graphql, sending the session's CSRF token when the page has one. */
const START = `(function () {
  var meta = document.querySelector('meta[name="csrf-token"]');
  var headers = {};
  if (meta) headers['X-CSRF-Token'] = meta.getAttribute('content');
  var fetcher = GraphiQL.createFetcher({ url: '/api/graphql', headers: headers });
  ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, { fetcher: fetcher }));
})();
`;

const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; "
  + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export default async function explorer(app: FastifyInstance): Promise<void> {
  // Read once at start-up: a few megabytes that never change while kiln runs.
  const files = new Map(Object.entries(ASSETS).map(([name, a]) => [name, { body: fs.readFileSync(a.file), type: a.type }]));
  files.set('start.js', { body: Buffer.from(START), type: 'text/javascript' });

  app.get('/-/graphql-explorer', { config: { web: true }, schema: { hide: true } }, async (request, reply) => {
    const session = readCookie(request.headers.cookie, SESSION_COOKIE);
    const csrf = session ? `<meta name="csrf-token" content="${escapeHtml(csrfTokenFor(app.kiln.secretKeyBase, session))}">` : '';
    const html = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>GraphiQL · kiln</title>${csrf}
<link rel="stylesheet" href="/-/graphql-explorer/assets/graphiql.css">
<style>body { margin: 0; height: 100vh; } #graphiql { height: 100vh; }</style></head>
<body><div id="graphiql">Loading…</div>
<script src="/-/graphql-explorer/assets/react.js"></script>
<script src="/-/graphql-explorer/assets/react-dom.js"></script>
<script src="/-/graphql-explorer/assets/graphiql.js"></script>
<script src="/-/graphql-explorer/assets/start.js"></script>
</body></html>`;
    return reply.header('content-security-policy', CSP).header('x-frame-options', 'DENY').header('cache-control', 'no-store')
      .type('text/html; charset=utf-8').send(html);
  });

  app.get<{ Params: { name: string } }>('/-/graphql-explorer/assets/:name', {
    config: { web: true }, schema: { hide: true },
  }, async (request, reply) => {
    const f = files.get(request.params.name);
    if (!f) return reply.code(404).type('text/plain').send('Not Found');
    return reply.header('cache-control', 'public, max-age=86400').header('x-content-type-options', 'nosniff').type(f.type).send(f.body);
  });
}
