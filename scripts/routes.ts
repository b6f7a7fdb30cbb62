/**
 * `npm run routes [-- area|text]`: every route kiln serves, one line each — method, path, guard
 * (auth mode, scopes besides `api`, whether a CI job token is taken) and the file that declares
 * it — read from the application itself. An argument keeps the lines that contain it
 * (`npm run routes -- ci/`, `npm run routes -- /user/keys`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';

const filter = process.argv[2] ?? '';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-routes-'));
try {
  const config = loadConfig({ KILN_DATA_DIR: dataDir, LOG_LEVEL: 'silent', KILN_CI_SWEEP_INTERVAL: '0' });
  const database = openDatabase(config);
  await migrateToLatest(database.db);
  const app = await buildApp(config, { database, secretKeyBase: 'routes', version: { version: '-', revision: '-' }, logger: false });
  await app.ready();
  const rows: string[][] = [];
  for (const route of app.routeTable) {
    const all = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
    if (all.length === 0) continue;
    const methods = all.length > 4 ? 'ANY' : all.join(',');
    const c = route.config ?? {};
    const guard = c.web ? 'web' : [
      c.auth ?? 'required', ...(c.scopes?.length ? [c.scopes.join('|')] : []),
      ...(c.jobToken ? ['job token'] : []),
    ].join(' ');
    const source = c.source ?? (route.url.startsWith('/api/v4') ? '' : '(outside /api/v4)');
    // Git's routes are registered once per namespace depth: one line stands for them all.
    const url = route.url.replace(/(\/:ns\d+)+/, '/*namespace');
    const row = [methods, url, guard, source];
    if (!rows.some((r) => r.join(' ') === row.join(' '))) rows.push(row);
  }
  const shown = rows.filter((r) => r.join(' ').includes(filter));
  const widths = [0, 1, 2].map((i) => Math.min(72, Math.max(...shown.map((r) => r[i]!.length))));
  for (const r of shown) console.log(r.map((v, i) => (i < 3 ? v.padEnd(widths[i]!) : v)).join('  ').trimEnd());
  await app.close();
  await database.close();
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
