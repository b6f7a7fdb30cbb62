/**
 * Creating a project or group label (Labels::CreateService behind POST …/labels): validated as
 * the model validates it, refused with 409 "Label already exists" when the owner already sees a
 * label of that title (its own or an ancestor group's, as the Service's create_label checks), and
 * inserted with its priority in one transaction; the unique index on (owner, title) settles a
 * race between two creations of the same title the same way.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { LabelRow } from '../../db/tables/labels.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { insertLabel, labelsQuery, setLabelPriority, type LabelScope } from './labels.queries.ts';
import { validateLabel, type ValidationErrors } from './label-attributes.ts';

export type LabelOwner = { projectId: number; groupId?: undefined } | { groupId: number; projectId?: undefined };

export interface CreateLabelInput {
  title: string;
  color: string;
  description?: string | null;
  /** Project labels only. */
  priority?: number | null;
}

export type CreateLabelResult =
  | { ok: true; label: LabelRow }
  | { ok: false; reason: 'invalid'; errors: ValidationErrors }
  | { ok: false; reason: 'exists' };

export async function createLabel(
  db: Kysely<DB>, owner: LabelOwner, visible: LabelScope, input: CreateLabelInput,
): Promise<CreateLabelResult> {
  const checked = validateLabel({ title: input.title, color: input.color, description: input.description ?? null }, true);
  if (!checked.ok) return { ok: false, reason: 'invalid', errors: checked.errors };
  const { title, color } = checked.value as Required<typeof checked.value>;
  const description = checked.value.description ?? null;
  if (await labelsQuery(db, visible, { title }).executeTakeFirst()) return { ok: false, reason: 'exists' };
  try {
    const label = await db.transaction().execute(async (trx) => {
      const row = await insertLabel(trx, {
        project_id: owner.projectId ?? null, group_id: owner.groupId ?? null, title, color, description,
      });
      if (owner.projectId !== undefined && input.priority !== undefined && input.priority !== null) {
        await setLabelPriority(trx, owner.projectId, row.id, input.priority);
      }
      return row;
    });
    return { ok: true, label };
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: 'exists' };
    throw err;
  }
}
