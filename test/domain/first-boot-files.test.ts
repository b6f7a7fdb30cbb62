/**
 * Files made at first boot (src/domain/instance/first-boot-files.ts: the signing keys of
 * src/oauth/keys.ts, the CI variables key) when several processes boot on one data directory at
 * once (KILN_WORKERS): every one must read the same, whole file. A key file that appeared before
 * its content was written was read half-written by a sibling, which then failed to start
 * (`DECODER routines::unsupported`, seen in CI).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadSigningKeys } from '../../src/oauth/keys.ts';
import { variablesKey } from '../../src/domain/ci-variables/encryption.ts';
import { readOrCreateFile } from '../../src/domain/instance/first-boot-files.ts';

const KEYS_MODULE = path.join(import.meta.dirname, '..', '..', 'src', 'oauth', 'keys.ts');

/** A separate process loading the keys of `dataDir`, printing their kids. */
function loadInProcess(dataDir: string): Promise<string> {
  const script = `import { loadSigningKeys } from ${JSON.stringify(KEYS_MODULE)};
    const k = await loadSigningKeys(${JSON.stringify(dataDir)});
    process.stdout.write(k.oidc.kid + ' ' + k.ci.kid);`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => { out += d; });
    child.stderr.on('data', (d: Buffer) => { err += d; });
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))));
  });
}

let midway: (() => void) | null = null;
let reached: Promise<void> = Promise.resolve();
const midwayReached = () => reached;

/** A slow disk, made so while `run` runs: each write stops midway for a moment, while another loader arrives. */
async function slowDisk(run: () => Promise<void>): Promise<void> {
  const original = fs.writeFile;
  reached = new Promise<void>((resolve) => { midway = resolve; });
  fs.writeFile = (async (file: string, data: string, opts: { flag?: string; mode?: number }) => {
    const handle = await fs.open(file, opts.flag ?? 'w', opts.mode);
    try {
      await handle.write(data.slice(0, 40));
      midway?.();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await handle.write(data.slice(40));
    } finally {
      await handle.close();
    }
  }) as typeof fs.writeFile;
  try {
    await run();
  } finally {
    fs.writeFile = original;
  }
}

describe('files made at first boot', () => {
  it('gives every concurrent loader in one process the same whole keys', async () => {
    for (let round = 0; round < 5; round++) {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-keys-'));
      try {
        const loaded = await Promise.all(Array.from({ length: 8 }, () => loadSigningKeys(dataDir)));
        assert.equal(new Set(loaded.map((k) => `${k.oidc.kid} ${k.ci.kid}`)).size, 1);
        const files = (await fs.readdir(path.join(dataDir, 'keys'))).sort();
        assert.deepEqual(files, ['ci_jwt.pem', 'oidc.pem'], 'no temporary files left behind');
        const mode = (await fs.stat(path.join(dataDir, 'keys', 'oidc.pem'))).mode & 0o777;
        assert.equal(mode, 0o600);
      } finally {
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    }
  });

  it('never shows another loader a key file half-written', async () => {
    await slowDisk(async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-keys-'));
      try {
        const first = loadSigningKeys(dataDir);
        await midwayReached();
        const [a, b] = await Promise.all([first, loadSigningKeys(dataDir)]);
        assert.equal(b.oidc.kid, a.oidc.kid);
        assert.equal(b.ci.kid, a.ci.kid);
      } finally {
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    });
  });

  it('gives two racing writers the one whole file published (the CI variables key is made so too)', async () => {
    await slowDisk(async () => {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-keys-'));
      try {
        const file = path.join(dir, 'ci_variables.key');
        const first = readOrCreateFile(file, () => `${'a'.repeat(64)}\n`);
        await midwayReached();
        const [a, b] = await Promise.all([first, readOrCreateFile(file, () => `${'b'.repeat(64)}\n`)]);
        // Both writes stop midway for the same 300 ms, so which one publishes first is up to the
        // thread pool: what must hold is that both get the one whole file that was published.
        assert.ok([`${'a'.repeat(64)}\n`, `${'b'.repeat(64)}\n`].includes(a), a);
        assert.equal(b, a);
        assert.equal(await fs.readFile(file, 'utf8'), a);
        assert.deepEqual(await fs.readdir(dir), ['ci_variables.key']);
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    });
  });

  it('makes the CI variables key once and reads it back', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-keys-'));
    try {
      const key = await variablesKey(dataDir);
      assert.equal(key.length, 32);
      const text = await fs.readFile(path.join(dataDir, 'keys', 'ci_variables.key'), 'utf8');
      assert.equal(text, `${key.toString('hex')}\n`);
      assert.equal((await fs.stat(path.join(dataDir, 'keys', 'ci_variables.key'))).mode & 0o777, 0o600);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('gives processes booting at once on one data directory the same keys', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-keys-'));
    try {
      const kids = await Promise.all(Array.from({ length: 4 }, () => loadInProcess(dataDir)));
      assert.equal(new Set(kids).size, 1, kids.join(' | '));
      const again = await loadSigningKeys(dataDir);
      assert.equal(`${again.oidc.kid} ${again.ci.kid}`, kids[0]);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
