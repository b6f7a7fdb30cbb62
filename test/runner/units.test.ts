/**
 * The runner's pieces that need no server: masking across chunk boundaries, bash quoting and
 * `set -eo pipefail`, the TOML config (owner-only file, bounds), zips that try to leave the
 * project directory, and variable expansion.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Masker } from '../../src/runner/trace.ts';
import { ansiC, stepScript } from '../../src/runner/shell.ts';
import { loadConfig, RunnerConfigError, saveConfig } from '../../src/runner/config.ts';
import { collectFiles, extractZip, writeZip } from '../../src/runner/archive.ts';
import { cacheFile, restoreCaches, saveCaches } from '../../src/runner/cache.ts';
import { expand } from '../../src/runner/variables.ts';
import { serviceAliases } from '../../src/runner/executors.ts';

async function tmp(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), 'kiln-runner-unit-'));
}

describe('kiln runner pieces', () => {
  it('masks values split across writes, longest first, byte-exact', () => {
    const m = new Masker(['s3cr3t-value', 's3cr3t', 'ünïcode']);
    const out = Buffer.concat([m.write(Buffer.from('a s3c')), m.write(Buffer.from('r3t-val')), m.write(Buffer.from('ue and s3cr3t and ünï')), m.write(Buffer.from('code!\n')), m.flush()]);
    assert.equal(out.toString('utf8'), 'a [MASKED] and [MASKED] and [MASKED]!\n');
    const none = new Masker([]);
    assert.equal(none.write(Buffer.from('plain')).toString(), 'plain');
  });

  it('quotes any text for bash and runs steps with set -eo pipefail', () => {
    const nasty = "it's $HOME `x` \\ \n\t\x01 ü";
    assert.equal(execFileSync('bash', ['-c', `printf %s ${ansiC(nasty)}`], { encoding: 'utf8' }), nasty);
    const script = stepScript(['echo one', 'false | cat', 'echo never']);
    let code = 0;
    let out = '';
    try {
      out = execFileSync('bash', ['-c', script], { encoding: 'utf8' });
    } catch (err) {
      code = (err as { status: number }).status;
      out = (err as { stdout: string }).stdout;
    }
    assert.equal(code, 1);
    assert.match(out, /\$ echo one\x1b\[0;m\none\n/);
    assert.doesNotMatch(out, /never\n/);
  });

  it('keeps the config in TOML, owner-readable only, and refuses out-of-bounds values', async () => {
    const dir = await tmp();
    const file = path.join(dir, 'conf', 'config.toml');
    await saveConfig(file, {
      concurrent: 3, check_interval: 3,
      runners: [{ name: 'r', url: 'http://127.0.0.1:1', id: 7, token: 'tok', executor: 'shell', builds_dir: '/b', cache_dir: '/c', limit: 2 }],
    });
    assert.equal((await fs.stat(file)).mode & 0o777, 0o600);
    const back = await loadConfig(file);
    assert.equal(back.concurrent, 3);
    assert.deepEqual(back.runners[0], { name: 'r', url: 'http://127.0.0.1:1', id: 7, token: 'tok', executor: 'shell', builds_dir: '/b', cache_dir: '/c', limit: 2 });
    await fs.writeFile(file, 'concurrent = 0\n');
    await assert.rejects(loadConfig(file), RunnerConfigError);
    await fs.writeFile(file, '[[runners]]\nurl = "ftp://x"\ntoken = "t"\n');
    await assert.rejects(loadConfig(file), /http/);
    await fs.writeFile(file, 'not toml = = 1');
    await assert.rejects(loadConfig(file), /not valid TOML/);
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('zips globbed paths minus excludes, and refuses entries that leave the directory', async () => {
    const dir = await tmp();
    await fs.mkdir(path.join(dir, 'src/a'), { recursive: true });
    await fs.writeFile(path.join(dir, 'src/a/x.txt'), 'x');
    await fs.writeFile(path.join(dir, 'src/a/y.log'), 'y');
    await fs.writeFile(path.join(dir, 'top.txt'), 't');
    const warnings: string[] = [];
    const files = await collectFiles(dir, { paths: ['src/', '*.txt', 'missing/', '../outside'], exclude: ['**/*.log'] }, (w) => warnings.push(w));
    assert.deepEqual(files, ['src/', 'src/a/', 'src/a/x.txt', 'top.txt']);
    assert.equal(warnings.length, 2);
    const zip = path.join(dir, 'a.zip');
    await writeZip(dir, files, zip);
    const dest = path.join(dir, 'out');
    await fs.mkdir(dest);
    assert.equal(await extractZip(zip, dest), 2);
    assert.equal(await fs.readFile(path.join(dest, 'src/a/x.txt'), 'utf8'), 'x');

    // A zip whose entry climbs out of the target: yazl refuses to write one, so the entry's name
    // is rewritten in place (same length) in the local and central headers.
    const safe = path.join(dir, 'safe');
    await fs.mkdir(path.join(safe, 'ok/aa/aa'), { recursive: true });
    await fs.writeFile(path.join(safe, 'ok/aa/aa/escape.txt'), 'pwned');
    await writeZip(safe, ['ok/aa/aa/escape.txt'], path.join(dir, 'evil.zip'));
    const bytes = await fs.readFile(path.join(dir, 'evil.zip'));
    const from = Buffer.from('ok/aa/aa/escape.txt');
    for (let at = bytes.indexOf(from); at >= 0; at = bytes.indexOf(from, at + 1)) Buffer.from('ok/../../escape.txt').copy(bytes, at);
    await fs.writeFile(path.join(dir, 'evil.zip'), bytes);
    await assert.rejects(extractZip(path.join(dir, 'evil.zip'), dest));
    await assert.rejects(fs.stat(path.join(dir, 'escape.txt')));
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('saves a cache per key, restores it (or a fallback key), and honours policy and when', async () => {
    const dir = await tmp();
    const cacheDir = path.join(dir, 'cache');
    const first = path.join(dir, 'first');
    await fs.mkdir(path.join(first, 'vendor'), { recursive: true });
    await fs.writeFile(path.join(first, 'vendor', 'dep.txt'), 'v1');
    const lines: string[] = [];
    const log = { notice: (l: string) => lines.push(l), warn: (l: string) => lines.push(`W ${l}`) };
    const common = { cacheDir, projectPath: 'g/p', ...log };
    await saveCaches({ ...common, projectDir: first, success: true, caches: [{ key: 'deps', paths: ['vendor/'] }] });
    // policy pull never saves; when on_failure does not save after a success.
    await fs.writeFile(path.join(first, 'vendor', 'dep.txt'), 'v2');
    await saveCaches({ ...common, projectDir: first, success: true, caches: [{ key: 'deps', paths: ['vendor/'], policy: 'pull' }, { key: 'deps', paths: ['vendor/'], when: 'on_failure' }] });
    const second = path.join(dir, 'second');
    await fs.mkdir(second);
    await restoreCaches({ ...common, projectDir: second, caches: [{ key: 'deps', paths: ['vendor/'] }] });
    assert.equal(await fs.readFile(path.join(second, 'vendor', 'dep.txt'), 'utf8'), 'v1');
    const third = path.join(dir, 'third');
    await fs.mkdir(third);
    await restoreCaches({ ...common, projectDir: third, caches: [{ key: 'feature', fallback_keys: ['deps'], paths: ['vendor/'] }] });
    assert.equal(await fs.readFile(path.join(third, 'vendor', 'dep.txt'), 'utf8'), 'v1');
    const fourth = path.join(dir, 'fourth');
    await fs.mkdir(fourth);
    await restoreCaches({ ...common, projectDir: fourth, caches: [{ key: 'deps', paths: ['vendor/'], policy: 'push' }] });
    await assert.rejects(fs.stat(path.join(fourth, 'vendor')));
    assert.ok(lines.some((l) => l.includes('Not uploading cache deps due to policy')));
    assert.ok(lines.some((l) => l.includes('Not downloading cache deps due to policy')));
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('names services on the job network as the Service does', () => {
    assert.deepEqual(serviceAliases({ name: 'postgres:14' }), ['postgres']);
    assert.deepEqual(serviceAliases({ name: 'registry.example.com:5000/a/b:1.2@sha256:abc', alias: 'one, two' }), ['registry.example.com__a__b', 'registry.example.com-a-b', 'one', 'two']);
  });

  it('expands $VAR and ${VAR}, keeps $$ as $; cache keys cannot leave the cache directory', () => {
    const vars = new Map([['A', 'one'], ['B_2', 'two']]);
    assert.equal(expand('$A-${B_2}-$MISSING-$$A', vars), 'one-two--$A');
    assert.equal(cacheFile('/c', 'g/p', 'key'), '/c/g/p/key/cache.zip');
    for (const bad of ['', '.', '..', 'a/b', 'a\\b']) assert.equal(cacheFile('/c', 'g/p', bad), null);
    assert.equal(cacheFile('/c', '../p', 'key'), null);
  });
});
