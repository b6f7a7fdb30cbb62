/**
 * The `release` step natively: the Service sends a job's `release:` as a `release-cli create`
 * command line (Gitlab::Ci::Build::Releaser); kiln runner reads its words as the job's shell
 * would (double quotes, backslash escapes, `$VAR` and `${VAR}` from the job's variables) and
 * creates the release through the API with the job token, as release-cli does: `--ref` defaults to
 * CI_COMMIT_SHA, milestones and asset links are repeated flags.
 */
export interface ReleaseRequest {
  tag_name?: string;
  name?: string;
  description?: string;
  tag_message?: string;
  ref?: string;
  released_at?: string;
  milestones?: string[];
  assets?: { links: Record<string, unknown>[] };
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** The words of a command line, expanded from `vars` (unknown variables are empty, as in sh). */
export function shellWords(line: string, vars: Map<string, string>): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quoted = false;
  const expand = (at: number): [string, number] => {
    const rest = line.slice(at + 1);
    if (rest.startsWith('{')) {
      const end = rest.indexOf('}');
      if (end > 0) return [vars.get(rest.slice(1, end)) ?? '', at + end + 2];
    }
    const m = NAME.exec(rest);
    return m ? [vars.get(m[0]) ?? '', at + 1 + m[0].length] : ['$', at + 1];
  };
  for (let i = 0; i < line.length;) {
    const c = line[i];
    if (!quoted && /\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
      i += 1;
      continue;
    }
    word ??= '';
    if (c === '"') { quoted = !quoted; i += 1; continue; }
    if (c === '\\' && i + 1 < line.length) {
      const next = line[i + 1];
      // Inside double quotes a backslash escapes only $ ` " \ (and a newline); elsewhere anything.
      if (!quoted || '$`"\\\n'.includes(next)) { word += next; i += 2; continue; }
      word += c;
      i += 1;
      continue;
    }
    if (c === '$') {
      const [value, next] = expand(i);
      word += value;
      i = next;
      continue;
    }
    word += c;
    i += 1;
  }
  if (word !== null) words.push(word);
  return words;
}

/** The release a `release-cli create …` line asks for, or null when the line is something else. */
export function parseReleaseCommand(line: string, vars: Map<string, string>): ReleaseRequest | null {
  const words = shellWords(line, vars);
  if (words[0] !== 'release-cli' || words[1] !== 'create') return null;
  const out: ReleaseRequest = {};
  for (let i = 2; i < words.length; i += 2) {
    const flag = words[i];
    const value = words[i + 1] ?? '';
    switch (flag) {
      case '--name': out.name = value; break;
      case '--description': out.description = value; break;
      case '--tag-name': out.tag_name = value; break;
      case '--tag-message': out.tag_message = value; break;
      case '--ref': out.ref = value; break;
      case '--released-at': out.released_at = value; break;
      case '--milestone': (out.milestones ??= []).push(value); break;
      case '--assets-link': {
        const link = JSON.parse(value) as Record<string, unknown>;
        (out.assets ??= { links: [] }).links.push(link);
        break;
      }
      default: throw new Error(`release-cli: unknown flag ${flag}`);
    }
  }
  out.ref ??= vars.get('CI_COMMIT_SHA');
  return out;
}

/** Creates the release through the API; the answer's message when the server refuses it. */
export async function createRelease(
  base: string, projectId: number, jobToken: string, body: ReleaseRequest, signal: AbortSignal,
): Promise<{ ok: true; tagName: string } | { ok: false; message: string }> {
  const res = await fetch(`${base.replace(/\/$/, '')}/api/v4/projects/${projectId}/releases`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'job-token': jobToken }, body: JSON.stringify(body), signal,
  });
  const text = await res.text();
  if (res.status === 201) return { ok: true, tagName: body.tag_name ?? '' };
  return { ok: false, message: `${res.status} ${text.slice(0, 500)}` };
}
