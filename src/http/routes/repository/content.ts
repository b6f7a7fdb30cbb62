/** How the repository API receives file content: text as UTF-8, or base64 (`encoding=base64`). */
import { invalidParams } from '../../errors.ts';

export function decodeContent(content: string, encoding: 'text' | 'base64'): Buffer {
  if (encoding === 'text') return Buffer.from(content, 'utf8');
  const compact = content.replace(/\s+/g, '');
  // Ruby's Base64.decode64 skips what is not base64; a client sending it meant something else.
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) throw invalidParams(['content is invalid']);
  return Buffer.from(compact, 'base64');
}
