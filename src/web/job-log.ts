/**
 * A job log as HTML (issue 33 item 4): ANSI colours by ansi_up, every piece of text escaped by
 * it, and the runner's collapsible sections. The runner marks a section with
 * `\e[0Ksection_start:<unix time>:<name>[collapsed=true]\r\e[0K<header>` and ends it with
 * `\e[0Ksection_end:<unix time>:<name>\r\e[0K` (the Service's docs, "Custom collapsible
 * sections"); the Service's log viewer shows a section's header as a line that folds the lines
 * up to its end.
 *
 * The log is rendered line by line, as a flat list — a header line carries the section's name,
 * each line inside carries the names of the sections it is in — so that the first render (streamed
 * from disk) and the pieces the live view appends later (the same renderer fed from an offset)
 * produce the same markup, and folding is a class toggled by the page's script (no nesting to
 * rebuild across pieces). A line is emitted only once its newline arrived; the rest waits for the
 * next piece or for `end()`.
 *
 * The page's policy refuses inline styles, so ansi_up's style attributes (bold, italic, faint,
 * underline, 24-bit colours) become classes; a 24-bit colour has no class and is dropped.
 */
import { AnsiUp } from 'ansi_up';

const SECTION = /\x1b\[0Ksection_(start|end):(\d{1,12}):([A-Za-z0-9_.-]{1,100})(\[[^\]\r\n]{0,200}\])?\r(?:\x1b\[0K)?/g;
const STYLE_CLASSES: Record<string, string> = {
  'font-weight:bold': 'ansi-bold', 'opacity:0.7': 'ansi-faint', 'font-style:italic': 'ansi-italic',
  'text-decoration:underline': 'ansi-underline',
};
/** The longest line kept whole; the rest of a longer line is cut with a mark (a log is not a file viewer). */
export const MAX_LINE = 64 * 1024;

function styleToClasses(style: string): string[] {
  return style.split(';').map((s) => STYLE_CLASSES[s]).filter((c): c is string => c !== undefined);
}

/** ansi_up's `<span style="…" class="…">` as `<span class="…">`: the policy allows no style attributes. */
function withoutStyles(markup: string): string {
  return markup.replace(/<span style="([^"]*)"(?: class="([^"]*)")?>/g, (_m, style: string, cls: string | undefined) => {
    const classes = [...styleToClasses(style), ...(cls ? cls.split(' ') : [])];
    return classes.length > 0 ? `<span class="${classes.join(' ')}">` : '<span>';
  });
}

/** What a line shows after the carriage returns a progress bar writes: the text after the last one. */
function afterCarriageReturns(line: string): string {
  const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line;
  const cr = trimmed.lastIndexOf('\r');
  return cr < 0 ? trimmed : trimmed.slice(cr + 1);
}

export class LogRenderer {
  private readonly ansi = new AnsiUp();
  private pending = '';
  /** Open sections, outermost first. */
  private readonly open: string[] = [];
  private lineNumber: number;

  /** `openSections`: the sections open where this piece of the log starts (the live view's last line knows them). */
  constructor(firstLine = 1, openSections: string[] = []) {
    this.open.push(...openSections);
    this.ansi.use_classes = true;
    // OSC 8 hyperlinks in a log are not followed: a log is text the job wrote, not kiln's links.
    this.ansi.url_allowlist = {};
    this.lineNumber = firstLine;
  }

  /** The lines completed by `text`, as HTML. */
  push(text: string): string {
    this.pending += text;
    const last = this.pending.lastIndexOf('\n');
    if (last < 0) {
      if (this.pending.length > MAX_LINE) return this.flushPending();
      return '';
    }
    const complete = this.pending.slice(0, last);
    this.pending = this.pending.slice(last + 1);
    return complete.split('\n').map((l) => this.line(l)).join('');
  }

  /** The last line, without a newline (the log's end, or a piece of a running job's log). */
  end(): string {
    return this.pending === '' ? '' : this.flushPending();
  }

  /** The number the next line will have (the live view continues counting from it). */
  get nextLine(): number {
    return this.lineNumber;
  }

  /** The sections open after the lines rendered so far (where the live view's next piece starts). */
  get openSections(): string[] {
    return [...this.open];
  }

  private flushPending(): string {
    const text = this.pending;
    this.pending = '';
    return this.line(text);
  }

  private line(raw: string): string {
    let text = raw.length > MAX_LINE ? `${raw.slice(0, MAX_LINE)}…` : raw;
    let header: { name: string; collapsed: boolean } | null = null;
    const closed: string[] = [];
    text = text.replace(SECTION, (_m, kind: string, _time: string, name: string, options: string | undefined) => {
      if (kind === 'start') {
        header = { name, collapsed: options?.includes('collapsed=true') ?? false };
      } else {
        closed.push(name);
      }
      return '';
    });
    text = afterCarriageReturns(text);
    // A line that only ended a section shows nothing (the Service's viewer hides it too).
    if (text === '' && closed.length > 0 && header === null) {
      this.close(closed);
      return '';
    }
    const body = withoutStyles(this.ansi.ansi_to_html(text));
    const n = this.lineNumber++;
    const inside = this.open.length > 0 ? ` data-sections="${this.open.join(' ')}"` : '';
    let out: string;
    const h = header as { name: string; collapsed: boolean } | null;
    if (h) {
      out = `<div class="log-line section-header${h.collapsed ? ' collapsed' : ''}" data-section="${h.name}"${inside}>`
        + `<span class="ln">${n}</span><span class="fold" aria-hidden="true"></span>${body}</div>`;
      this.open.push(h.name);
    } else {
      out = `<div class="log-line"${inside}><span class="ln">${n}</span>${body}</div>`;
    }
    this.close(closed);
    return out + '\n';
  }

  private close(names: string[]): void {
    for (const name of names) {
      const at = this.open.lastIndexOf(name);
      if (at >= 0) this.open.splice(at);
    }
  }
}
