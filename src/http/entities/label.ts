/**
 * The label entities of the Service 15.2 (lib/api/entities/label_basic.rb, label.rb,
 * project_label.rb, group_label.rb): LabelBasic → Label (+ counts when asked `with_counts`,
 * + `subscribed` for the viewer) → ProjectLabel (+ `priority` in the project, `is_project_label`)
 * and GroupLabel (Label as is).
 *
 * Other areas (issues' `labels` with `with_labels_details`, board lists) show LabelBasic: import
 * `LabelBasicSchema` / `presentLabelBasic`, also exported as `LabelSchema` / `presentLabel`.
 */
import { Type, type Static } from 'typebox';
import type { LabelRow } from '../../db/tables/labels.ts';
import { textColorFor } from '../../domain/labels/color.ts';
import { renderSingleLine } from '../../domain/labels/single-line-markdown.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const LabelBasicSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  color: Type.String(),
  description: NString,
  description_html: Type.String(),
  text_color: Type.String(),
  // Labels that drop off an issue when it closes are not kept by kiln: always false.
  remove_on_close: Type.Boolean(),
}, { title: 'LabelBasic' });

/** The label fields other entities embed (the Service's LabelBasic). */
export const LabelSchema = LabelBasicSchema;
export type LabelBasic = Static<typeof LabelBasicSchema>;

const counts = {
  open_issues_count: Type.Optional(Type.Integer()),
  closed_issues_count: Type.Optional(Type.Integer()),
  open_merge_requests_count: Type.Optional(Type.Integer()),
};

export const GroupLabelSchema = Type.Object({
  ...LabelBasicSchema.properties,
  ...counts,
  subscribed: Type.Boolean(),
}, { title: 'GroupLabel' });

export const ProjectLabelSchema = Type.Object({
  ...LabelBasicSchema.properties,
  ...counts,
  subscribed: Type.Boolean(),
  priority: Type.Union([Type.Integer(), Type.Null()]),
  is_project_label: Type.Boolean(),
}, { title: 'ProjectLabel' });

export type GroupLabel = Static<typeof GroupLabelSchema>;
export type ProjectLabel = Static<typeof ProjectLabelSchema>;

export function presentLabelBasic(row: LabelRow): LabelBasic {
  return {
    id: row.id,
    name: row.title,
    color: row.color,
    description: row.description,
    description_html: renderSingleLine(row.description),
    text_color: textColorFor(row.color),
    remove_on_close: false,
  };
}
export const presentLabel = presentLabelBasic;

/** Issue and merge request counts of a label as the viewer may see them (`with_counts=true`). */
export interface LabelCounts {
  open_issues_count: number;
  closed_issues_count: number;
  open_merge_requests_count: number;
}

export interface LabelView {
  subscribed: boolean;
  /** Present only when the list was asked `with_counts`. */
  counts?: LabelCounts;
}

export function presentGroupLabel(row: LabelRow, view: LabelView): GroupLabel {
  const e = presentLabelBasic(row) as GroupLabel;
  if (view.counts) Object.assign(e, view.counts);
  e.subscribed = view.subscribed;
  return e;
}

/** A label as a project sees it: its own or one of its groups', with the project's priority for it. */
export function presentProjectLabel(row: LabelRow, view: LabelView & { priority: number | null }): ProjectLabel {
  const e = presentGroupLabel(row, view) as ProjectLabel;
  e.priority = view.priority;
  e.is_project_label = row.project_id !== null;
  return e;
}
