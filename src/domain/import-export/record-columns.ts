/**
 * What an import takes from each list of an archive's document, column by column, with the bound
 * each value must meet before it reaches the database (issue 13): `t` a name-like string (255),
 * `T` text (1 MiB, the Service's description bound), `s` a 40-or-64-hex object id, `d` a
 * timestamp or date text, `i` an integer in PostgreSQL's range, `f` a 0/1 flag; `?` allows null.
 * Columns that refer to people or other records are mapped by the importer, not listed here.
 */
import { isStorableText } from '../../db/constraints.ts';

export type ColumnKind = 't' | 'T' | 's' | 'd' | 'i' | 'f';
export type ColumnSpec = Record<string, `${ColumnKind}` | `${ColumnKind}?`>;

export const LABEL_COLUMNS: ColumnSpec = { title: 't', color: 't', description: 'T?', created_at: 'd', updated_at: 'd' };
export const MILESTONE_COLUMNS: ColumnSpec = {
  iid: 'i', title: 't', description: 'T?', state: 't', due_date: 'd?', start_date: 'd?', created_at: 'd', updated_at: 'd',
};
export const ISSUE_COLUMNS: ColumnSpec = {
  iid: 'i', title: 't', description: 'T?', state: 't', issue_type: 't', due_date: 'd?', confidential: 'f', discussion_locked: 'f?',
  time_estimate: 'i', relative_position: 'i?', closed_at: 'd?', last_edited_at: 'd?', created_at: 'd', updated_at: 'd',
};
export const MERGE_REQUEST_COLUMNS: ColumnSpec = {
  iid: 'i', source_branch: 't', target_branch: 't', title: 't', description: 'T?', state: 't', merge_status: 't', draft: 'f',
  squash: 'f', force_remove_source_branch: 'f?', should_remove_source_branch: 'f?', merge_params: 'T?', merge_commit_sha: 's?',
  squash_commit_sha: 's?', merge_error: 'T?', merged_at: 'd?', closed_at: 'd?', discussion_locked: 'f?', time_estimate: 'i',
  last_edited_at: 'd?', created_at: 'd', updated_at: 'd',
};
export const DIFF_COLUMNS: ColumnSpec = {
  head_commit_sha: 's', base_commit_sha: 's?', start_commit_sha: 's?', state: 't', real_size: 't?', created_at: 'd',
};
export const DIFF_COMMIT_COLUMNS: ColumnSpec = { sha: 's', relative_order: 'i' };
export const NOTE_COLUMNS: ColumnSpec = {
  note: 'T', system: 'f', system_action: 't?', internal: 'f', type: 't?', discussion_id: 't', resolvable: 'f', resolved_at: 'd?',
  position: 'T?', commit_id: 's?', last_edited_at: 'd?', created_at: 'd', updated_at: 'd',
};
export const AWARD_COLUMNS: ColumnSpec = { name: 't', created_at: 'd', updated_at: 'd' };
export const VARIABLE_COLUMNS: ColumnSpec = {
  key: 't', variable_type: 't', protected: 'f', masked: 'f', raw: 'f', environment_scope: 't', created_at: 'd', updated_at: 'd',
};
export const PIPELINE_COLUMNS: ColumnSpec = {
  iid: 'i', ref: 't', tag: 'f', sha: 's', before_sha: 's', source: 't', status: 't', config_path: 't', commit_data: 'T',
  yaml_errors: 'T?', created_at: 'd', updated_at: 'd', started_at: 'd?', finished_at: 'd?', duration: 'i?',
};
export const MEMBER_COLUMNS: ColumnSpec = { access_level: 'i', expires_at: 'd?', created_at: 'd' };

export class RecordError extends Error {}

const MAX_INT = 2147483647;

function checkValue(list: string, col: string, kind: ColumnKind, v: unknown): unknown {
  const bad = () => new RecordError(`The archive's ${list} have an invalid ${col}`);
  switch (kind) {
    case 'i':
    case 'f':
      if (typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) > MAX_INT) throw bad();
      if (kind === 'f' && v !== 0 && v !== 1) throw bad();
      return v;
    default: {
      if (typeof v !== 'string' || !isStorableText(v)) throw bad();
      const max = kind === 'T' ? 1024 * 1024 : kind === 'd' ? 40 : 255;
      if (v.length > max) throw bad();
      if (kind === 's' && !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(v)) throw bad();
      if (kind === 'd' && !/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(v)) throw bad();
      return v;
    }
  }
}

/** The row's carried columns, checked; throws RecordError for a value out of bounds. */
export function pick(list: string, row: Record<string, unknown>, spec: ColumnSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [col, kindText] of Object.entries(spec)) {
    const nullable = kindText.endsWith('?');
    const kind = kindText[0] as ColumnKind;
    const v = row[col];
    if (v === null || v === undefined) {
      if (!nullable) throw new RecordError(`The archive's ${list} lack ${col}`);
      out[col] = null;
      continue;
    }
    out[col] = checkValue(list, col, kind, v);
  }
  return out;
}

/** A source id inside the document (only to refer between its records). */
export function sourceId(list: string, row: Record<string, unknown>, col = 'id'): number | null {
  const v = row[col];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0
    || v > MAX_INT) throw new RecordError(`The archive's ${list} have an invalid ${col}`);
  return v;
}
