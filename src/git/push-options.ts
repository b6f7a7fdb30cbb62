/**
 * What a receive-pack request says before its pack, read as it streams past (gitprotocol-pack:
 * the update commands `<old> <new> <ref>`, a flush-pkt, then — when the client asked for the
 * `push-options` capability — one pkt-line per option (`git push -o ci.skip`) and a flush-pkt,
 * then the pack). The bytes go through untouched and at once; only the first MAX_SNIFF bytes are
 * looked at, so a push is never delayed or buffered.
 *
 * The commands say which refs this push meant to move, which the repository's refs before and
 * after it cannot: a push that runs beside another push to the same project would otherwise take
 * the other's ref updates as its own and start their pipelines a second time (issue 35, item 1).
 */
import { Transform } from 'node:stream';

const MAX_SNIFF = 64 * 1024;
const MAX_OPTIONS = 32;
const OID = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

export interface PushCommand {
  /** The value the client says the ref has (all zeros: the ref is created). */
  before: string;
  /** The value it asks for (all zeros: the ref is deleted). */
  after: string;
  ref: string;
}

export interface PushRequestHead {
  /** Null when they cannot be read (a signed push's certificate, a line that is not a command). */
  commands: PushCommand[] | null;
  options: string[];
}

export interface PushOptionSniffer extends Transform {
  /** The push options the client sent (empty when none or not yet seen). */
  options(): string[];
  /** The update commands, or null when they were not all seen (past MAX_SNIFF, or a signed push). */
  commands(): PushCommand[] | null;
}

/** Parses pkt-lines from the start of `buf`: the commands, then the options if announced; null while incomplete. */
export function parsePushRequest(buf: Buffer): PushRequestHead | null {
  let pos = 0;
  let section: 'commands' | 'options' = 'commands';
  let announced = false;
  let commands: PushCommand[] | null = [];
  const options: string[] = [];
  while (pos + 4 <= buf.length) {
    const len = Number.parseInt(buf.subarray(pos, pos + 4).toString('latin1'), 16);
    if (Number.isNaN(len)) return { commands: null, options };
    if (len === 0) {
      pos += 4;
      if (section === 'commands' && announced) { section = 'options'; continue; }
      return { commands, options };
    }
    if (len < 4 || pos + len > buf.length) return null;
    const line = buf.subarray(pos + 4, pos + len).toString('utf8').replace(/\n$/, '');
    if (section === 'commands') {
      const nul = line.indexOf('\0');
      if (nul >= 0 && line.slice(nul + 1).split(' ').includes('push-options')) announced = true;
      const command = nul >= 0 ? line.slice(0, nul) : line;
      // A shallow clone's boundary commits come first; they move no ref.
      if (!command.startsWith('shallow ')) {
        const [before, after, ref, extra] = command.split(' ');
        if (commands && OID.test(before ?? '') && OID.test(after ?? '') && ref && extra === undefined) commands.push({
          before, after, ref,
        });
        else commands = null;
      }
    } else if (options.length < MAX_OPTIONS) {
      options.push(line);
    }
    pos += len;
  }
  return null;
}

export function pushOptionSniffer(): PushOptionSniffer {
  let head = Buffer.alloc(0);
  let found: PushRequestHead | null = null;
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (found === null && head.length < MAX_SNIFF) {
        head = Buffer.concat([head, chunk.subarray(0, MAX_SNIFF - head.length)]);
        found = parsePushRequest(head);
      }
      done(null, chunk);
    },
  }) as PushOptionSniffer;
  t.options = () => found?.options ?? [];
  t.commands = () => found?.commands ?? null;
  return t;
}

const ZERO_OID = /^0+$/;

/**
 * The commands receive-pack carried out, judged by the refs after the push (`after`: full ref
 * name → commit): a ref now where the command asked, or gone when it asked for a deletion.
 * receive-pack moves a ref only if it still holds the command's `before`, so a command whose ref
 * ended elsewhere was refused (or overtaken by a later push, which starts its own pipelines).
 */
export function appliedCommands(commands: PushCommand[], after: Map<string, string>): PushCommand[] {
  return commands.filter((c) => (ZERO_OID.test(c.after) ? !after.has(c.ref) : after.get(c.ref) === c.after));
}
