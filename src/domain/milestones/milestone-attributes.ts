/**
 * A milestone's attributes as the Service's Milestone and Timebox models validate them (15.2):
 * title present and at most 255 characters, description at most 1 MiB (MAX_TEXT_SIZE_LIMIT), the
 * due date not before the start date ("must be greater than start date" on due_date), and a title
 * used once among a project's and its group's milestones ("already being used for another group
 * or project milestone.", Milestone#uniqueness_of_title).
 */
export const MILESTONE_TITLE_MAX = 255;
export const MILESTONE_DESCRIPTION_MAX = 1024 * 1024;
export const TITLE_TAKEN = 'already being used for another group or project milestone.';

export type ValidationErrors = Record<string, string[]>;

export interface MilestoneAttributes {
  title?: string;
  description?: string | null;
  due_date?: string | null;
  start_date?: string | null;
}

/** Errors of the milestone's attributes after a change (`merged` holds the whole milestone as it would be). */
export function milestoneErrors(merged: Required<MilestoneAttributes>): ValidationErrors | null {
  const errors: ValidationErrors = {};
  const add = (k: string, m: string) => { (errors[k] ??= []).push(m); };
  if (merged.title.trim() === '') add('title', "can't be blank");
  if ([...merged.title].length > MILESTONE_TITLE_MAX) add('title', `is too long (maximum is ${MILESTONE_TITLE_MAX} characters)`);
  if (merged.description !== null && [...merged.description].length > MILESTONE_DESCRIPTION_MAX) {
    add('description', `is too long (maximum is ${MILESTONE_DESCRIPTION_MAX} characters)`);
  }
  if (merged.start_date && merged.due_date && merged.due_date < merged.start_date) add('due_date', 'must be greater than start date');
  return Object.keys(errors).length ? errors : null;
}
