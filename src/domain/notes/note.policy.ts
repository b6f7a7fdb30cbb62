/**
 * What a viewer may do with single notes (NotePolicy of the Service 15.2) once they may read the
 * noteable: internal notes are read by Reporters and up (read_internal_note); a note is changed
 * or removed by its author or by whoever holds admin_note on the project (Maintainers), and
 * never when it is a system note (Note#editable?); a note's creation date may be set by
 * administrators and project owners (set_note_created_at).
 */
import { ACCESS_LEVELS, type Actor } from '../permissions/access.ts';
import { canOnProject, type ProjectSubject } from '../permissions/project.policy.ts';

export function canReadInternalNotes(actor: Actor): boolean {
  return Boolean(actor.user?.admin) || actor.accessLevel >= ACCESS_LEVELS.reporter;
}

export function canAdminNote(actor: Actor, project: ProjectSubject, note: { author_id: number; system: number }): boolean {
  if (note.system || !actor.user) return false;
  if (actor.user.id === note.author_id && !project.archived) return true;
  return canOnProject(actor, 'admin_note', project);
}

export function canSetNoteCreatedAt(actor: Actor): boolean {
  return Boolean(actor.user?.admin) || actor.accessLevel >= ACCESS_LEVELS.owner;
}
