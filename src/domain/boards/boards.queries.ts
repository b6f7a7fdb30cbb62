/**
 * Every Kysely call about issue boards and their lists. A board is a project's or a group's; its
 * lists are the 'backlog' and 'closed' lists every board gets (Boards::CreateService) and label
 * lists at positions 0, 1, 2 … (the Service's movable lists), kept contiguous by the moves and
 * deletions below, each in one transaction.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { LabelRow } from '../../db/tables/labels.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export type BoardOwner = { projectId: number; groupId?: undefined } | { groupId: number; projectId?: undefined };

export function boardsQuery(db: Db, owner: BoardOwner) {
  const qb = db.selectFrom('boards').selectAll();
  return (owner.projectId !== undefined ? qb.where('project_id', '=', owner.projectId) : qb.where('group_id', '=', owner.groupId!))
    .orderBy('id', 'asc');
}

export function findBoard(db: Db, owner: BoardOwner, id: number) {
  return boardsQuery(db, owner).where('id', '=', id).executeTakeFirst();
}

/** A new board with its backlog and closed lists. */
export async function insertBoard(db: Kysely<DB>, owner: BoardOwner, name: string) {
  const now = nowIso();
  return db.transaction().execute(async (trx) => {
    const board = await trx.insertInto('boards').values({
      project_id: owner.projectId ?? null, group_id: owner.groupId ?? null, name, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    await trx.insertInto('board_lists').values([
      { board_id: board.id, label_id: null, list_type: 'backlog', position: null, created_at: now, updated_at: now },
      { board_id: board.id, label_id: null, list_type: 'closed', position: null, created_at: now, updated_at: now },
    ]).execute();
    return board;
  });
}

export function updateBoardRow(db: Db, id: number, set: { name?: string; hide_backlog_list?: 0 | 1; hide_closed_list?: 0 | 1 }) {
  return db.updateTable('boards').set({ ...set, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/**
 * Deletes a board, its last one too: python-gitlab's functional suite, run against the Service,
 * creates a project's only board and deletes it (the older "doesn't have any other boards" refusal
 * of Boards::DestroyService is gone). Its lists go with it (foreign key cascade).
 */
export async function deleteBoard(db: Kysely<DB>, id: number): Promise<void> {
  await db.deleteFrom('boards').where('id', '=', id).execute();
}

export type BoardListWithLabel = { id: number; board_id: number; position: number | null; label: LabelRow };

/** The label lists of some boards (the Service's destroyable lists), by position. */
export async function labelListsOf(db: Db, boardIds: number[], listId?: number): Promise<BoardListWithLabel[]> {
  if (boardIds.length === 0) return [];
  let qb = db.selectFrom('board_lists').innerJoin('labels', 'labels.id', 'board_lists.label_id')
    .select([
      'board_lists.id as list_id', 'board_lists.board_id', 'board_lists.position',
      'labels.id', 'labels.project_id', 'labels.group_id', 'labels.title', 'labels.color', 'labels.description',
      'labels.created_at', 'labels.updated_at',
    ])
    .where('board_lists.board_id', 'in', boardIds).where('board_lists.list_type', '=', 'label');
  if (listId !== undefined) qb = qb.where('board_lists.id', '=', listId);
  const rows = await qb.orderBy('board_lists.board_id').orderBy('board_lists.position').orderBy('board_lists.id').execute();
  return rows.map(({ list_id, board_id, position, ...label }) => ({ id: list_id, board_id, position, label }));
}

/**
 * Takes the board's row lock for the rest of the transaction: list positions are derived (the
 * next is the greatest plus one; a move shifts the others), so two writes to one board's lists
 * must not read them at once. On PostgreSQL the update holds the row until commit; SQLite's write
 * lock is the whole file already.
 */
async function lockBoard(trx: Transaction<DB>, boardId: number, now: string): Promise<void> {
  await trx.updateTable('boards').set({ updated_at: now }).where('id', '=', boardId).execute();
}

/** A label list appended after the board's last (Boards::Lists::CreateService); undefined when the label is listed already. */
export async function appendLabelList(db: Kysely<DB>, boardId: number, labelId: number): Promise<number | undefined> {
  const now = nowIso();
  return db.transaction().execute(async (trx) => {
    await lockBoard(trx, boardId, now);
    const last = await trx.selectFrom('board_lists').select((eb) => eb.fn.max('position').as('p'))
      .where('board_id', '=', boardId).where('list_type', '=', 'label').executeTakeFirst();
    const position = last?.p === null || last?.p === undefined ? 0 : Number(last.p) + 1;
    const row = await trx.insertInto('board_lists').values({
      board_id: boardId, label_id: labelId, list_type: 'label', position, created_at: now, updated_at: now,
    }).onConflict((oc) => oc.columns(['board_id', 'label_id']).where('label_id', 'is not', null).doNothing())
      .returning('id').executeTakeFirst();
    return row?.id;
  });
}

/**
 * Moves a label list to `to` (Boards::Lists::MoveService): the lists between its old and new
 * places shift by one. False when the move is no move or out of range, as the Service refuses it.
 */
export async function moveLabelList(db: Kysely<DB>, boardId: number, listId: number, to: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await lockBoard(trx, boardId, nowIso());
    const list = await trx.selectFrom('board_lists').select('position').where('id', '=', listId).executeTakeFirst();
    const count = await trx.selectFrom('board_lists').select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('board_id', '=', boardId).where('list_type', '=', 'label').executeTakeFirstOrThrow();
    const from = list?.position ?? null;
    if (from === null || to === from || to < 0 || to >= Number(count.n)) return false;
    const now = nowIso();
    const between = trx.updateTable('board_lists').where('board_id', '=', boardId).where('list_type', '=', 'label');
    if (from < to) {
      await between.set({ position: sql`position - 1`, updated_at: now }).where('position', '>', from).where('position', '<=', to).execute();
    } else {
      await between.set({ position: sql`position + 1`, updated_at: now }).where('position', '>=', to).where('position', '<', from).execute();
    }
    await trx.updateTable('board_lists').set({ position: to, updated_at: now }).where('id', '=', listId).execute();
    return true;
  });
}

/** Deletes a label list and closes its gap (Boards::Lists::DestroyService). */
export async function deleteLabelList(db: Kysely<DB>, boardId: number, listId: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockBoard(trx, boardId, nowIso());
    const list = await trx.deleteFrom('board_lists').where('id', '=', listId).returning('position').executeTakeFirst();
    if (list?.position === null || list?.position === undefined) return;
    await trx.updateTable('board_lists').set({ position: sql`position - 1`, updated_at: nowIso() })
      .where('board_id', '=', boardId).where('list_type', '=', 'label').where('position', '>', list.position).execute();
  });
}
