/**
 * Push options (`git push -o ci.skip`) read from a receive-pack request as it streams past
 * (gitprotocol-pack: the update commands, a flush-pkt, then — when the client asked for the
 * `push-options` capability — one pkt-line per option and a flush-pkt, then the pack). The
 * bytes go through untouched and at once; only the first MAX_SNIFF bytes are looked at, so a
 * push is never delayed or buffered.
 */
import { Transform } from 'node:stream';

const MAX_SNIFF = 64 * 1024;
const MAX_OPTIONS = 32;

export interface PushOptionSniffer extends Transform {
  /** The push options the client sent (empty when none or not yet seen). */
  options(): string[];
}

/** Parses pkt-lines from the start of `buf`: the commands, then the options if announced. */
export function parsePushOptions(buf: Buffer): string[] | null {
  let pos = 0;
  let section: 'commands' | 'options' = 'commands';
  let announced = false;
  const options: string[] = [];
  while (pos + 4 <= buf.length) {
    const len = Number.parseInt(buf.subarray(pos, pos + 4).toString('latin1'), 16);
    if (Number.isNaN(len)) return options;
    if (len === 0) {
      pos += 4;
      if (section === 'commands' && announced) { section = 'options'; continue; }
      return options;
    }
    if (len < 4 || pos + len > buf.length) return null;
    const line = buf.subarray(pos + 4, pos + len).toString('utf8').replace(/\n$/, '');
    if (section === 'commands') {
      const nul = line.indexOf('\0');
      if (nul >= 0 && line.slice(nul + 1).split(' ').includes('push-options')) announced = true;
    } else if (options.length < MAX_OPTIONS) {
      options.push(line);
    }
    pos += len;
  }
  return null;
}

export function pushOptionSniffer(): PushOptionSniffer {
  let head = Buffer.alloc(0);
  let found: string[] | null = null;
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (found === null && head.length < MAX_SNIFF) {
        head = Buffer.concat([head, chunk.subarray(0, MAX_SNIFF - head.length)]);
        found = parsePushOptions(head);
      }
      done(null, chunk);
    },
  }) as PushOptionSniffer;
  t.options = () => found ?? [];
  return t;
}
