/**
 * A job's log on its way to the server (gitlab-runner network/trace.go and helpers/trace):
 * output is masked ([MASKED] for masked variables' values), kept whole, and appended to the
 * server's copy with PATCH /jobs/:id/trace at most every few seconds and a few hundred KB a
 * chunk. The server's answers tell the runner when the job was canceled (403 with Job-Status),
 * and a 416 says where the server's log really ends. The CRC32 of the whole log goes with the
 * final update as its checksum ("crc32:%08x", as the Service's runner sends it).
 */
import zlib from 'node:zlib';
import { patchTrace, updateJob } from './api.ts';

export const ANSI = {
  clear: '\x1b[0K', reset: '\x1b[0;m', boldGreen: '\x1b[32;1m', boldRed: '\x1b[31;1m', boldYellow: '\x1b[0;33m', boldCyan: '\x1b[36;1m',
};

/** The Service caps one append at about 128 KB-1 MB; kiln's runner sends at most 256 KB at once. */
const MAX_CHUNK = 256 * 1024;
/** The Service's runner sends its log every 3 s by default (updateInterval). */
const DEFAULT_INTERVAL_MS = 3000;
/** The Service's default output limit (output_limit = 4096 KB). */
const OUTPUT_LIMIT = 4 * 1024 * 1024;

/**
 * Replaces every masked value by [MASKED], scanning left to right with the longest value first,
 * and holding back a tail that may still become a value once the next write arrives.
 */
export class Masker {
  private readonly values: string[];
  private readonly longest: number;
  private pending = '';

  constructor(values: string[]) {
    // Bytes as latin1 text keep the replacement byte-exact whatever the encoding.
    this.values = [...new Set(values.filter((v) => v.length > 0))].map((v) => Buffer.from(
      v, 'utf8',
    ).toString('latin1')).sort((a, b) => b.length - a.length);
    this.longest = this.values.reduce((m, v) => Math.max(m, v.length), 0);
  }

  private scan(text: string, final: boolean): string {
    let out = '';
    let plainFrom = 0;
    let i = 0;
    outer: while (i < text.length) {
      const rest = text.length - i;
      if (!final && rest < this.longest) {
        const tail = text.slice(i);
        // A value may begin here and go on in the next write: wait for it.
        if (this.values.some((v) => v.length > rest && v.startsWith(tail))) break;
      }
      for (const v of this.values) {
        if (text.startsWith(v, i)) {
          out += `${text.slice(plainFrom, i)}[MASKED]`;
          i += v.length;
          plainFrom = i;
          continue outer;
        }
      }
      i += 1;
    }
    this.pending = text.slice(i);
    return out + text.slice(plainFrom, i);
  }

  write(chunk: Buffer): Buffer {
    if (this.values.length === 0) return chunk;
    return Buffer.from(this.scan(this.pending + chunk.toString('latin1'), false), 'latin1');
  }

  flush(): Buffer {
    if (this.pending === '') return Buffer.alloc(0);
    return Buffer.from(this.scan(this.pending, true), 'latin1');
  }
}

export class JobTrace {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private sent = 0;
  private crc = 0;
  private limited = false;
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  private intervalMs = DEFAULT_INTERVAL_MS;
  private lastContact = Date.now();
  private readonly masker: Masker;
  /** Aborted when the server says the job is no longer running (canceled, or ended elsewhere). */
  readonly aborted = new AbortController();
  abortedStatus: string | null = null;

  private readonly base: string;
  private readonly jobId: number;
  private readonly token: string;

  constructor(base: string, jobId: number, token: string, masked: string[]) {
    this.base = base;
    this.jobId = jobId;
    this.token = token;
    this.masker = new Masker(masked);
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), 500);
    this.timer.unref();
  }

  write(data: Buffer | string): void {
    const raw = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.append(this.masker.write(raw));
  }

  private append(buf: Buffer): void {
    if (buf.length === 0 || this.limited) return;
    if (this.size + buf.length > OUTPUT_LIMIT) {
      const room = OUTPUT_LIMIT - this.size;
      const notice = Buffer.from(
        `\n${ANSI.boldYellow}Job's log exceeded limit of ${OUTPUT_LIMIT} bytes.\nJob execution will continue but no more output `
        + `will be collected.${ANSI.reset}\n`,
      );
      buf = Buffer.concat([buf.subarray(0, Math.max(0, room)), notice]);
      this.limited = true;
    }
    this.chunks.push(buf);
    this.size += buf.length;
    this.crc = zlib.crc32(buf, this.crc);
  }

  /** A line of the runner's own (notices, errors), as the Service's runner prints them. */
  notice(text: string): void {
    this.write(`${ANSI.boldGreen}${text}${ANSI.reset}\n`);
  }

  warning(text: string): void {
    this.write(`${ANSI.boldYellow}WARNING: ${text}${ANSI.reset}\n`);
  }

  error(text: string): void {
    this.write(`${ANSI.boldRed}ERROR: ${text}${ANSI.reset}\n`);
  }

  sectionStart(name: string, header: string, collapsed = false): void {
    this.write(
      `section_start:${Math.floor(Date.now() / 1000)}:${name}${collapsed ? '[collapsed=true]' : ''}\r`
      + `${ANSI.clear}${ANSI.boldCyan}${header}${ANSI.reset}\n`,
    );
  }

  sectionEnd(name: string): void {
    this.write(`section_end:${Math.floor(Date.now() / 1000)}:${name}\r${ANSI.clear}`);
  }

  get checksum(): string {
    return `crc32:${this.crc.toString(16).padStart(8, '0')}`;
  }

  get bytesize(): number {
    return this.size;
  }

  /** The whole log so far (for tests and the runner's own log). */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  private async tick(): Promise<void> {
    if (this.sending || this.aborted.signal.aborted) return;
    const due = Date.now() - this.lastContact >= this.intervalMs;
    if (!due && this.size - this.sent < MAX_CHUNK) return;
    this.sending = (this.size > this.sent ? this.sendPending() : this.touch()).catch(() => {
      // A failed append is retried at the next tick; the final flush reports what could not be sent.
    }).finally(() => {
      this.sending = null;
    });
  }

  /** Nothing new to send: a heartbeat, whose answer says whether the job still runs. */
  private async touch(): Promise<void> {
    const res = await updateJob(this.base, this.jobId, this.token, { state: 'running' });
    this.lastContact = Date.now();
    this.checkAbort(res.status, res.jobStatus);
  }

  private checkAbort(status: number, jobStatus: string | null): void {
    if (status === 403 || status === 404) {
      this.abortedStatus = jobStatus ?? 'unknown';
      this.aborted.abort();
    }
  }

  private async sendPending(): Promise<void> {
    while (this.size > this.sent && !this.aborted.signal.aborted) {
      const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
      this.chunks.length = 0;
      this.chunks.push(all);
      const chunk = all.subarray(this.sent, Math.min(this.size, this.sent + MAX_CHUNK));
      const res = await patchTrace(this.base, this.jobId, this.token, this.sent, chunk);
      this.lastContact = Date.now();
      if (res.interval) this.intervalMs = Math.min(30_000, Math.max(1000, res.interval * 1000));
      if (res.status === 202) {
        this.sent += chunk.length;
      } else if (res.status === 416 && res.end !== null && res.end <= this.size) {
        // The server's log ends elsewhere (a lost answer): continue from there.
        this.sent = res.end;
      } else {
        this.checkAbort(res.status, res.jobStatus);
        if (!this.aborted.signal.aborted) throw new Error(`log append answered ${res.status}`);
        return;
      }
    }
  }

  /** Stops the timer and sends everything still pending (a few attempts). */
  async finish(): Promise<boolean> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.append(this.masker.flush());
    while (this.sending) await this.sending;
    for (let attempt = 0; attempt < 5 && this.size > this.sent && !this.aborted.signal.aborted; attempt++) {
      try {
        await this.sendPending();
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
      }
    }
    return this.size === this.sent;
  }
}
