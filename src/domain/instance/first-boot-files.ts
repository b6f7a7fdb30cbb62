/**
 * Files an instance makes once, at first boot, under KILN_DATA_DIR/keys (signing keys, the CI
 * variables key). Several processes may boot on one data directory at once (KILN_WORKERS), so a
 * file is written whole under a name of its own and then published by a hard link, which fails
 * when the name exists: the loser of the race reads the winner's file. Creating the named file
 * exclusively and then writing it let a sibling read it half-written and fail to start.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';

/** The file's text; when there is none yet, `make`'s, published as above (mode 0600). */
export async function readOrCreateFile(file: string, make: () => string | Promise<string>): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const text = await make();
  const whole = `${file}.${process.pid}.${crypto.randomUUID()}.tmp`;
  await fs.writeFile(whole, text, { flag: 'wx', mode: 0o600 });
  try {
    await fs.link(whole, file);
    return text;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return fs.readFile(file, 'utf8');
  } finally {
    await fs.rm(whole, { force: true });
  }
}
