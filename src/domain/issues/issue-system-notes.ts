/**
 * The texts of the system notes an issue's update writes (app/services/system_notes/
 * issuables_service.rb and time_tracking_service.rb of the Service 15.2). Labels, milestones and
 * state are not among them: the Service 15.2 records those as resource events only and renders
 * their notes when they are read.
 */
import type { UserRow } from '../../db/types.ts';

/**
 * `changed title from **{-old-}** to **{+new+}**`: the changed middle of each title marked, the
 * common start and end left plain (Gitlab::Diff::InlineDiff's prefix/suffix ranges with the
 * InlineDiffMarkdownMarker's `{-…-}` and `{+…+}`).
 */
export function titleChangeNote(oldTitle: string, newTitle: string): string {
  const a = [...oldTitle];
  const b = [...newTitle];
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end += 1;
  const mark = (chars: string[], sym: '-' | '+') => {
    const mid = chars.slice(start, chars.length - end).join('');
    return `${chars.slice(0, start).join('')}${mid ? `{${sym}${mid}${sym}}` : ''}${chars.slice(chars.length - end).join('')}`;
  };
  return `changed title from **${mark(a, '-')}** to **${mark(b, '+')}**`;
}

/** `assigned to @a`, `unassigned @b`, or both joined with ` and ` (change_issuable_assignees). */
export function assigneesChangeNote(added: readonly UserRow[], removed: readonly UserRow[]): string {
  const names = (users: readonly UserRow[]) => toSentence(users.map((u) => `@${u.username}`));
  const parts: string[] = [];
  if (added.length > 0) parts.push(`assigned to ${names(added)}`);
  if (removed.length > 0) parts.push(`unassigned ${names(removed)}`);
  return parts.join(' and ');
}

/** Ruby's Array#to_sentence: `a`, `a and b`, `a, b, and c`. */
function toSentence(words: readonly string[]): string {
  if (words.length <= 1) return words.join('');
  if (words.length === 2) return `${words[0]} and ${words[1]}`;
  return `${words.slice(0, -1).join(', ')}, and ${words[words.length - 1]}`;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** `changed due date to November 27, 2026` / `removed due date` (change_start_date_or_due_date, Date#to_s(:long)). */
export function dueDateChangeNote(dueDate: string | null): string {
  if (dueDate === null) return 'removed due date';
  const [y, m, d] = dueDate.split('-').map(Number);
  return `changed due date to ${MONTHS[m - 1]} ${d}, ${y}`;
}

export const confidentialityNote = (confidential: boolean) =>
  (confidential ? 'made the issue confidential' : 'made the issue visible to everyone');

export const discussionLockNote = (locked: boolean) => `${locked ? 'locked' : 'unlocked'} this issue`;

/** `changed issue type to incident` (change_issue_type: the type humanised, lower-case). */
export const issueTypeNote = (type: string) => `changed issue type to ${type.replace(/_/g, ' ')}`;

export const DESCRIPTION_CHANGED_NOTE = 'changed the description';
