/**
 * Arrays of hashes as Rack reads them from a form (`actions[][action]=create&actions[][file_path]=a
 * &actions[][action]=delete&actions[][file_path]=b` is two actions): a new element starts when
 * the current one already has the key. qs would merge those into one element with array values,
 * so such keys are given explicit indices (`actions[0][action]`, `actions[1][action]`) before qs
 * parses the form. Real clients send this shape: the Ruby gem's (HTTParty's) form encoding of
 * POST /projects/:id/repository/commits `actions`.
 */

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

export function indexRackArrays(body: string): string {
  if (!body.includes('%5B%5D%5B') && !body.includes('[][')) return body;
  const elements = new Map<string, { index: number; keys: Set<string> }>();
  return body.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const rawKey = eq === -1 ? pair : pair.slice(0, eq);
    const key = decode(rawKey);
    const at = key.indexOf('[][');
    if (at <= 0) return pair;
    const prefix = key.slice(0, at);
    const child = key.slice(at + 2);
    let current = elements.get(prefix);
    if (!current) {
      current = { index: 0, keys: new Set() };
      elements.set(prefix, current);
    } else if (current.keys.has(child)) {
      current.index += 1;
      current.keys = new Set();
    }
    current.keys.add(child);
    const indexed = encodeURIComponent(`${prefix}[${current.index}]${child}`);
    return eq === -1 ? indexed : `${indexed}${pair.slice(eq)}`;
  }).join('&');
}
