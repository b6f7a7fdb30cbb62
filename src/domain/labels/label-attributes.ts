/**
 * A label's attributes as the Service's Label model validates them (app/models/label.rb, 15.2):
 * title and colour stripped of surrounding blanks; the title present, without a comma, at most
 * 255 characters; the colour a valid colour code; the description at most 512 KiB
 * (Label::DESCRIPTION_LENGTH_MAX). Errors are keyed by attribute, as render_validation_error! shows them.
 */
import sanitizeHtml from 'sanitize-html';
import { COLOR_MAX, parseColor } from './color.ts';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * The Service stores a label's title and description as Sanitize.clean leaves them, HTML entities
 * then unescaped (Label#sanitize_value): tags go, script and style contents with them, text stays.
 */
export function sanitizeLabelText(value: string): string {
  const text = sanitizeHtml(value, { allowedTags: [], allowedAttributes: {} });
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] !== '#') return ENTITIES[name.toLowerCase()] ?? whole;
    const code = name[1].toLowerCase() === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

export const LABEL_TITLE_MAX = 255;
export const LABEL_DESCRIPTION_MAX = 512 * 1024;

export type ValidationErrors = Record<string, string[]>;

export interface LabelInput {
  title?: string;
  color?: string;
  description?: string | null;
}

export interface CleanLabel {
  title?: string;
  color?: string;
  description?: string | null;
}

export type LabelValidation = { ok: true; value: CleanLabel } | { ok: false; errors: ValidationErrors };

export function validateLabel(input: LabelInput, creating: boolean): LabelValidation {
  const errors: ValidationErrors = {};
  const add = (k: string, m: string) => { (errors[k] ??= []).push(m); };
  const value: CleanLabel = {};
  // Label#title= and #description= write only present values: a blank one given to an update
  // leaves the attribute as it was (a creation's blank title is then "can't be blank").
  if (input.title !== undefined && (creating || input.title.trim() !== '')) {
    const title = sanitizeLabelText(input.title).trim();
    if (title === '') add('title', "can't be blank");
    else if (title.includes(',')) add('title', 'is invalid');
    if ([...title].length > LABEL_TITLE_MAX) add('title', `is too long (maximum is ${LABEL_TITLE_MAX} characters)`);
    value.title = title;
  }
  if (input.color !== undefined) {
    const color = input.color.length > COLOR_MAX ? null : parseColor(input.color);
    if (color === null) add('color', 'must be a valid color code');
    else value.color = color;
  }
  if (input.description !== undefined && input.description !== null && input.description.trim() !== '') {
    if ([...input.description].length > LABEL_DESCRIPTION_MAX) {
      add('description', `is too long (maximum is ${LABEL_DESCRIPTION_MAX} characters)`);
    } else {
      value.description = sanitizeLabelText(input.description);
    }
  }
  return Object.keys(errors).length ? { ok: false, errors } : { ok: true, value };
}
