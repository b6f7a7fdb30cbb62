/**
 * Secrets never reach the logs: credential query parameters are masked in every logged URL, and so
 * are CI/CD variable values (`value`, `variables[…]`), which may be masked secrets (issue 20).
 */
const SECRET_PARAMS = new Set([
  'private_token', 'access_token', 'job_token', 'token', 'bearer_token', 'client_secret', 'code', 'refresh_token', 'password',
  'value', 'variables',
]);

/** The parameter a query key names, as qs reads it: percent-decoded, without Rails brackets. */
function paramName(key: string): string {
  let name = key;
  if (name.includes('%') || name.includes('+')) {
    try {
      name = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // Malformed escapes: qs leaves them as sent, and so does this.
    }
  }
  const bracket = name.indexOf('[');
  return (bracket > 0 ? name.slice(0, bracket) : name).toLowerCase();
}

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  // Compare decoded names, so that `private%5Ftoken=…` (which authenticates) is masked as well.
  const pairs = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    return eq > 0 && SECRET_PARAMS.has(paramName(pair.slice(0, eq))) ? `${pair.slice(0, eq + 1)}[FILTERED]` : pair;
  });
  return `${url.slice(0, q + 1)}${pairs.join('&')}`;
}
