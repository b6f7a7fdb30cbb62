/**
 * Changing a label (Labels::UpdateService behind PUT …/labels/:name): new title, colour and
 * description validated as the model validates them, and for a project the label's priority there
 * (null removes it), in one transaction. A new title another label of the owner holds answers the
 * model's "has already been taken", from the unique index rather than a read before the write.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { LabelRow } from '../../db/tables/labels.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { setLabelPriority, updateLabelRow } from './labels.queries.ts';
import { validateLabel, type CleanLabel, type ValidationErrors } from './label-attributes.ts';

export interface UpdateLabelInput {
  title?: string;
  color?: string;
  description?: string | null;
  /** The project whose priority changes, and the priority (null removes it). */
  priority?: { projectId: number; value: number | null };
}

export type UpdateLabelResult = { ok: true; label: LabelRow } | { ok: false; reason: 'invalid'; errors: ValidationErrors };

export async function updateLabel(db: Kysely<DB>, label: LabelRow, input: UpdateLabelInput): Promise<UpdateLabelResult> {
  const checked = validateLabel({ title: input.title, color: input.color, description: input.description }, false);
  if (!checked.ok) return { ok: false, reason: 'invalid', errors: checked.errors };
  const set: CleanLabel = checked.value;
  try {
    const row = await db.transaction().execute(async (trx) => {
      const updated = Object.keys(set).length ? (await updateLabelRow(trx, label.id, set)) ?? label : label;
      if (input.priority) await setLabelPriority(trx, input.priority.projectId, label.id, input.priority.value);
      return updated;
    });
    return { ok: true, label: row };
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: 'invalid', errors: { title: ['has already been taken'] } };
    throw err;
  }
}
