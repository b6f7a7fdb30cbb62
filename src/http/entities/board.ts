/**
 * The Service's Entities::Board and Entities::List (15.2, with the fields its tiers add shown as
 * kiln has them): a board's `project` (BasicProjectDetails) or `group`, and its label lists. kiln
 * does not scope boards to a milestone, assignee, labels or weight, nor limit lists: those fields
 * say so (null, empty, 0) rather than being left out, so clients reading them find what is true.
 */
import { Type, type Static } from 'typebox';
import type { BoardListWithLabel } from '../../domain/boards/boards.queries.ts';
import { BasicProjectDetailsSchema, type BasicProjectDetails } from './project.ts';
import { LabelBasicSchema, presentLabelBasic } from './label.ts';

export const BoardListSchema = Type.Object({
  id: Type.Integer(),
  label: LabelBasicSchema,
  position: Type.Union([Type.Integer(), Type.Null()]),
  max_issue_count: Type.Integer(),
  max_issue_weight: Type.Integer(),
  limit_metric: Type.Null(),
}, { title: 'List' });

const BoardGroupSchema = Type.Object({ id: Type.Integer(), name: Type.String(), web_url: Type.String() }, { title: 'BoardGroup' });

export const BoardSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  hide_backlog_list: Type.Boolean(),
  hide_closed_list: Type.Boolean(),
  project: Type.Union([BasicProjectDetailsSchema, Type.Null()]),
  group: Type.Union([BoardGroupSchema, Type.Null()]),
  milestone: Type.Null(),
  assignee: Type.Null(),
  labels: Type.Array(LabelBasicSchema),
  weight: Type.Null(),
  lists: Type.Array(BoardListSchema),
}, { title: 'Board' });

export type BoardList = Static<typeof BoardListSchema>;
export type Board = Static<typeof BoardSchema>;

export function presentBoardList(list: BoardListWithLabel): BoardList {
  return {
    id: list.id, label: presentLabelBasic(list.label), position: list.position, max_issue_count: 0, max_issue_weight: 0, limit_metric: null,
  };
}

export interface BoardOwnerView {
  project: BasicProjectDetails | null;
  group: { id: number; name: string; web_url: string } | null;
}

export function presentBoard(
  row: { id: number; name: string; hide_backlog_list: number; hide_closed_list: number },
  owner: BoardOwnerView, lists: BoardListWithLabel[],
): Board {
  return {
    id: row.id,
    name: row.name,
    hide_backlog_list: row.hide_backlog_list === 1,
    hide_closed_list: row.hide_closed_list === 1,
    project: owner.project,
    group: owner.group,
    milestone: null,
    assignee: null,
    labels: [],
    weight: null,
    lists: lists.map(presentBoardList),
  };
}
