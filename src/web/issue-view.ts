/**
 * Pieces the issue, label and milestone pages share (issue 33): a label as a coloured chip, an
 * issue's state, a person, the addresses of issues and milestones — the same paths as the API's
 * `web_url`s (http/entities/issue.ts `<project>/-/issues/<iid>`, milestone.ts
 * `<project>/-/milestones/<iid>` and `/groups/<group>/-/milestones/<iid>`) — form fields read
 * within bounds, and Markdown rendered by the API's sanitising renderer with the project's
 * references linked as the viewer may see them (http/markdown-references.ts).
 */
import type { KilnContext } from '../http/context.ts';
import type { ProjectContext } from '../http/loaders/containers.ts';
import { referenceResolverFor } from '../http/markdown-references.ts';
import type { UserRow } from '../db/types.ts';
import { isStorableText } from '../db/constraints.ts';
import { DEFAULT_LABEL_COLOR, textColorFor } from '../domain/labels/color.ts';
import type { MarkdownRenderer } from '../domain/markdown/render-pool.ts';
import { html, SafeHtml } from './html.ts';
import { keyboardSafe } from './routes/projects/overview.ts';

export const enc = (value: string) => value.split('/').map(encodeURIComponent).join('/');

export const issuesPath = (projectPath: string) => `/${enc(projectPath)}/-/issues`;
export const issuePath = (projectPath: string, iid: number) => `${issuesPath(projectPath)}/${iid}`;
export const groupPath = (groupPath: string) => `/groups/${enc(groupPath)}`;

/** The path of an absolute `web_url` of this instance (the API's entities give absolute ones). */
export function localPath(webUrl: string): string {
  try {
    return new URL(webUrl).pathname;
  } catch {
    return '/';
  }
}

/**
 * A label as a chip in its own colour. The page's policy allows no inline style, so the colour is
 * an SVG rectangle's `fill` (a presentation attribute, not a style) behind the text, and the text
 * takes the dark or light class the Service's contrast rule picks (labels/color.ts textColorFor).
 */
export function labelChip(label: LabelDetail, href?: string): SafeHtml {
  const color = /^#[0-9A-Fa-f]{6}$/.test(label.color) ? label.color : DEFAULT_LABEL_COLOR;
  const tone = textColorFor(color) === '#FFFFFF' ? 'light' : 'dark';
  const inner = html`<svg class="label-fill" aria-hidden="true" focusable="false" viewBox="0 0 1 1" preserveAspectRatio="none"><rect width="1" height="1" fill="${color}"/></svg><span class="label-text">${label.name}</span>`;
  const title = label.description ? label.description : undefined;
  return href
    ? html`<a class="label-chip label-on-${tone}" href="${href}"${title ? html` title="${title}"` : ''}>${inner}</a>`
    : html`<span class="label-chip label-on-${tone}"${title ? html` title="${title}"` : ''}>${inner}</span>`;
}

export interface LabelDetail { name: string; color: string; description?: string | null }

/** An issue entity's labels presented with their details (with_labels_details), not as titles. */
export function labelDetails(labels: readonly unknown[]): LabelDetail[] {
  return labels.filter((l): l is LabelDetail => typeof l === 'object' && l !== null);
}

export function issueState(state: string): SafeHtml {
  return state === 'closed'
    ? html`<span class="issue-state state-closed">Closed</span>`
    : html`<span class="issue-state state-opened">Open</span>`;
}

export function personLink(user: { username: string; name: string } | null | undefined): SafeHtml | string {
  return user ? html`<a href="/${encodeURIComponent(user.username)}">${user.name}</a>` : 'a deleted user';
}

export function timeTag(iso: string | null | undefined): SafeHtml | string {
  if (!iso) return '';
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}</time>`;
}

export type Form = Record<string, unknown>;

/** A form field as text when it is one and within `max` characters with nothing unstorable, else undefined. */
export function formText(form: Form, name: string, max: number): string | undefined {
  const v = form[name];
  return typeof v === 'string' && v.length <= max && isStorableText(v) ? v : undefined;
}

/** A query parameter as text (`''` when absent, too long or unstorable): a page address is never an error. */
export function queryValue(query: Record<string, unknown>, name: string, max = 255): string {
  const v = query[name];
  return typeof v === 'string' && v.length <= max && isStorableText(v) ? v.trim() : '';
}

/** A repeated query parameter (`label_name[]=a&label_name[]=b`) as at most `limit` bounded values. */
export function queryValues(query: Record<string, unknown>, name: string, limit = 10, max = 255): string[] {
  const raw = query[name] ?? query[`${name}[]`];
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return list.filter((v): v is string => typeof v === 'string' && v.trim() !== '' && v.length <= max && isStorableText(v))
    .map((v) => v.trim()).slice(0, limit);
}

/**
 * A task list's boxes are shown, not used (the renderer disables them): each is named, so that a
 * screen reader says what the checked state belongs to (WCAG 4.1.2; the item's text follows it).
 */
function namedTaskBoxes(rendered: string): string {
  const box = '<input type="checkbox" class="task-list-item-checkbox"';
  return rendered.replaceAll(box, `${box} aria-label="Task"`);
}

/**
 * Markdown as the API renders descriptions and notes (GitLab Flavored, sanitised), references
 * linked as `viewer` may see them from `project` (a confidential issue's reference only for those
 * who may read it).
 */
export async function renderMarkdown(
  markdown: MarkdownRenderer, ctx: KilnContext, viewer: UserRow | null, project: ProjectContext | undefined, text: string,
): Promise<SafeHtml> {
  const resolveReferences = referenceResolverFor(ctx.db, { externalUrl: ctx.config.externalUrl, viewer, project });
  const rendered = await markdown.render(text, { gfm: true, ownHost: new URL(ctx.config.externalUrl).host, resolveReferences });
  // Sanitised by the renderer (domain/markdown/sanitize.ts): the one kind of markup kiln puts in a page as it is.
  return new SafeHtml(namedTaskBoxes(keyboardSafe(rendered)));
}
