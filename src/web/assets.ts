/**
 * kiln's own static files (src/web/assets/): the stylesheet and the pages' small client scripts.
 * Each is read once at start-up and served at `/-/assets/<name>-<hash>.<ext>`: the hash of its
 * content is in its name, so it is cached for a year (`immutable`) and a new release is a new
 * name. Pages link them through `assetUrl()`; the strict policy of layout.ts allows scripts and
 * styles from this origin only, so no page carries inline script or style.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';

const DIR = path.join(import.meta.dirname, 'assets');
const TYPES: Record<string, string> = { '.css': 'text/css; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };

interface Asset { url: string; type: string; body: Buffer }

function loadAssets(): Map<string, Asset> {
  const byName = new Map<string, Asset>();
  for (const file of fs.readdirSync(DIR).sort()) {
    const ext = path.extname(file);
    const type = TYPES[ext];
    if (!type) continue;
    const body = fs.readFileSync(path.join(DIR, file));
    const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 16);
    byName.set(file, { url: `/-/assets/${path.basename(file, ext)}-${hash}${ext}`, type, body });
  }
  return byName;
}

const ASSETS = loadAssets();
const BY_URL = new Map([...ASSETS.values()].map((a) => [a.url, a]));

/** The address of an asset by its file name (`kiln.css`); a missing file is a programming error. */
export function assetUrl(name: string): string {
  const asset = ASSETS.get(name);
  if (!asset) throw new Error(`no asset ${name} in src/web/assets`);
  return asset.url;
}

const assets: FastifyPluginAsync = async (app) => {
  app.get('/-/assets/:file', { config: { web: true, page: false }, schema: { hide: true } }, async (request, reply) => {
    const asset = BY_URL.get(request.url.split('?', 1)[0]!);
    if (!asset) return reply.callNotFound();
    return reply.code(200).type(asset.type)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .send(asset.body);
  });
};

export default assets;
