/**
 * Which branch and tag names kiln accepts, checked before a name reaches git: the rules of
 * `git check-ref-format` (git-check-ref-format(1), applied to `refs/heads/<name>`), and the
 * Service's own refusals on top (Gitlab::GitRefValidator: no leading '-', not `HEAD`, not a
 * name that already spells a full ref such as `refs/heads/x`), and `@`, which revision syntax
 * reads as HEAD while kiln resolves refs by their short names. Each component is bounded by
 * what a loose ref file may be named on disk, the whole name by MAX_REF_NAME.
 */

export const MAX_REF_NAME = 1024;
const MAX_COMPONENT_BYTES = 255;

/** Whether `name` may name a branch or tag (the part after `refs/heads/` or `refs/tags/`). */
export function validRefName(name: string): boolean {
  if (name === '' || name.length > MAX_REF_NAME) return false;
  if (name === 'HEAD' || name === '@' || name.startsWith('-')) return false;
  if (name.startsWith('refs/heads/') || name.startsWith('refs/remotes/') || name.startsWith('refs/tags/')) return false;
  // Control characters, space and the characters git reserves for revision syntax.
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return false;
  if (name.includes('..') || name.includes('@{') || name.includes('//')) return false;
  if (name.startsWith('/') || name.endsWith('/') || name.endsWith('.')) return false;
  for (const component of name.split('/')) {
    if (component.startsWith('.') || component.endsWith('.lock')) return false;
    if (Buffer.byteLength(component) > MAX_COMPONENT_BYTES) return false;
  }
  return true;
}

/**
 * Whether `rev` may be handed to git as a revision to read (a branch, a tag, a commit id, or an
 * expression such as `main~1`, which the Service's readers accept too). Never an option, never
 * a control character, and bounded; git then decides whether it names anything.
 */
export function readableRevision(rev: string): boolean {
  return rev !== '' && rev.length <= MAX_REF_NAME && !rev.startsWith('-') && !/[\x00-\x1f\x7f]/.test(rev) && !rev.includes('..');
}

export const COMMIT_ID = /^[0-9a-f]{40}$/;
export const ZERO_ID = '0'.repeat(40);
