/**
 * A Content-Disposition value for a file name of any characters: an ASCII `filename` with the
 * rest replaced for old clients, and the exact name as RFC 5987's `filename*` (RFC 6266 §4.3).
 */
export function contentDisposition(kind: 'attachment' | 'inline', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
