/**
 * Issue boards of projects and groups and their label lists (lib/api/boards.rb, group_boards.rb
 * and boards_responses.rb, 15.2). Every route needs a signed-in caller. Reading takes
 * read_issue_board on the project (read_group on a group); writing takes admin_issue_board
 * (Reporter). A new board gets its backlog and closed lists; the API shows label lists only,
 * by position. Listing boards creates none: a project without boards lists [] (the Service's
 * documented answer), and the last board of a project or group cannot be deleted.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { isStorableId } from '../../../db/constraints.ts';
import {
  appendLabelList, boardsQuery, deleteBoard, deleteLabelList, findBoard, insertBoard, labelListsOf, moveLabelList,
  updateBoardRow, type BoardOwner,
} from '../../../domain/boards/boards.queries.ts';
import { labelsQuery, type LabelScope } from '../../../domain/labels/labels.queries.ts';
import { starCountsOf } from '../../../domain/stars/stars.queries.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { canOnGroup } from '../../../domain/permissions/group.policy.ts';
import { BoardListSchema, BoardSchema, presentBoard, presentBoardList, type BoardOwnerView } from '../../entities/board.ts';
import { presentBasicProjectDetails } from '../../entities/project.ts';
import { ApiError, forbidden, recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginateArray, paginationParams } from '../../lists/pagination.ts';
import { loadGroup, loadProject } from '../../loaders/containers.ts';
import { route } from '../../route.ts';
import { projectLabelScope } from './label-context.ts';

/** What the routes need of a board's owner, whichever kind it is. */
interface BoardParent {
  owner: BoardOwner;
  view: BoardOwnerView;
  labels: LabelScope;
  canAdmin: boolean;
}

const boardName = P.string({ maxLength: 255 });

const boards: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  const loaders = {
    projects: async (request: FastifyRequest, id: string): Promise<BoardParent> => {
      const ctx = await loadProject(request, id);
      if (!canOnProject(ctx.actor, 'read_issue_board', ctx.project)) throw forbidden();
      const readCode = canOnProject(ctx.actor, 'download_code', ctx.project);
      const starCount = (await starCountsOf(db, [ctx.project.id])).get(ctx.project.id) ?? 0;
      return {
        owner: { projectId: ctx.project.id },
        view: {
          project: presentBasicProjectDetails(ctx.project, ctx.namespace, {
            externalUrl: config.externalUrl, sshPort: config.sshPort, readCode, starCount,
          }),
          group: null,
        },
        labels: projectLabelScope(ctx, true),
        canAdmin: canOnProject(ctx.actor, 'admin_issue_board', ctx.project),
      };
    },
    groups: async (request: FastifyRequest, id: string): Promise<BoardParent> => {
      const ctx = await loadGroup(request, id);
      return {
        owner: { groupId: ctx.group.id },
        view: { project: null, group: { id: ctx.group.id, name: ctx.group.name, web_url: `${config.externalUrl}/groups/${ctx.fullPath}` } },
        labels: { projectIds: [], groupIds: ctx.lineage },
        canAdmin: canOnGroup(ctx.actor, 'admin_issue_board', ctx.group),
      };
    },
  };

  for (const [kind, load] of Object.entries(loaders)) {
    const noun = kind === 'projects' ? 'project' : 'group';
    const base = `/${kind}/:id/boards`;
    const idParam = { id: P.string({ description: `ID or URL-encoded full path of the ${noun}` }) };
    const boardParams = { ...idParam, board_id: P.integer() };
    const listParams = { ...boardParams, list_id: P.integer() };

    const loadBoard = async (request: FastifyRequest, input: { id: string; board_id: number }) => {
      const parent = await load(request, input.id);
      const board = isStorableId(input.board_id) ? await findBoard(db, parent.owner, input.board_id) : undefined;
      if (!board) throw recordNotFound();
      return { parent, board };
    };
    const admin = (parent: BoardParent) => { if (!parent.canAdmin) throw forbidden(); };
    const loadList = async (request: FastifyRequest, input: { id: string; board_id: number; list_id: number }) => {
      const { parent, board } = await loadBoard(request, input);
      const list = isStorableId(input.list_id) ? (await labelListsOf(db, [board.id], input.list_id))[0] : undefined;
      if (!list) throw recordNotFound();
      return { parent, board, list };
    };
    type BoardRow = { id: number; name: string; hide_backlog_list: number; hide_closed_list: number };
    const present = async (parent: BoardParent, rows: BoardRow[]) => {
      const lists = await labelListsOf(db, rows.map((r) => r.id));
      return rows.map((r) => presentBoard(r, parent.view, lists.filter((l) => l.board_id === r.id)));
    };

    route(app, {
      method: 'GET', url: base, auth: 'required', params: defineParams({ ...idParam, ...paginationParams }),
      schema: { summary: `A ${noun}'s issue boards`, tags: ['boards'], response: { 200: Type.Array(BoardSchema) } },
    }, async ({ request, reply, input }) => {
      const parent = await load(request, input.id);
      return present(parent, await paginate(db, request, reply, boardsQuery(db, parent.owner)));
    });

    route(app, {
      method: 'GET', url: `${base}/:board_id`, auth: 'required', params: defineParams(boardParams),
      schema: { summary: `A ${noun} issue board`, tags: ['boards'], response: { 200: BoardSchema } },
    }, async ({ request, input }) => {
      const { parent, board } = await loadBoard(request, input);
      return (await present(parent, [board]))[0];
    });

    route(app, {
      method: 'POST', url: base, auth: 'required', params: defineParams({ ...idParam, name: boardName }),
      schema: { summary: `Create a ${noun} issue board`, tags: ['boards'], response: { 201: BoardSchema } },
    }, async ({ request, reply, input }) => {
      const parent = await load(request, input.id);
      admin(parent);
      if (input.name.trim() === '') throw validationFailed({ name: ["can't be blank"] });
      const board = await insertBoard(db, parent.owner, input.name);
      return reply.code(201).send((await present(parent, [board]))[0]);
    });

    route(app, {
      method: 'PUT', url: `${base}/:board_id`, auth: 'required',
      params: defineParams({
        ...boardParams, name: P.optional(boardName), hide_backlog_list: P.optional(P.boolean()), hide_closed_list: P.optional(P.boolean()),
      }),
      schema: { summary: `Change a ${noun} issue board`, tags: ['boards'], response: { 200: BoardSchema } },
    }, async ({ request, input }) => {
      const { parent, board } = await loadBoard(request, input);
      admin(parent);
      if (input.name !== undefined && input.name.trim() === '') throw validationFailed({ name: ["can't be blank"] });
      const flag = (b: boolean | undefined) => (b === undefined ? undefined : b ? 1 as const : 0 as const);
      const updated = await updateBoardRow(db, board.id, {
        name: input.name, hide_backlog_list: flag(input.hide_backlog_list), hide_closed_list: flag(input.hide_closed_list),
      });
      return (await present(parent, [updated]))[0];
    });

    route(app, {
      method: 'DELETE', url: `${base}/:board_id`, auth: 'required', params: defineParams(boardParams),
      schema: { summary: `Delete a ${noun} issue board`, tags: ['boards'] },
    }, async ({ request, reply, input }) => {
      const { parent, board } = await loadBoard(request, input);
      admin(parent);
      await deleteBoard(db, board.id);
      return reply.code(204).send();
    });

    route(app, {
      method: 'GET', url: `${base}/:board_id/lists`, auth: 'required', params: defineParams({ ...boardParams, ...paginationParams }),
      schema: { summary: `The label lists of a ${noun} issue board`, tags: ['boards'], response: { 200: Type.Array(BoardListSchema) } },
    }, async ({ request, reply, input }) => {
      const { board } = await loadBoard(request, input);
      return paginateArray(request, reply, await labelListsOf(db, [board.id])).map(presentBoardList);
    });

    route(app, {
      method: 'GET', url: `${base}/:board_id/lists/:list_id`, auth: 'required', params: defineParams(listParams),
      schema: { summary: `A label list of a ${noun} issue board`, tags: ['boards'], response: { 200: BoardListSchema } },
    }, async ({ request, input }) => presentBoardList((await loadList(request, input)).list));

    route(app, {
      method: 'POST', url: `${base}/:board_id/lists`, auth: 'required', params: defineParams({ ...boardParams, label_id: P.integer() }),
      schema: { summary: `Add a label list to a ${noun} issue board`, tags: ['boards'], response: { 201: BoardListSchema } },
    }, async ({ request, reply, input }) => {
      const { parent, board } = await loadBoard(request, input);
      // The Service looks for the label among those the board's owner may use before it authorizes.
      const label = isStorableId(input.label_id)
        ? await labelsQuery(db, parent.labels).where('labels.id', '=', input.label_id).executeTakeFirst()
        : undefined;
      if (!label) throw new ApiError(400, { error: 'Label not found!' });
      admin(parent);
      const listId = await appendLabelList(db, board.id, label.id);
      if (listId === undefined) throw validationFailed({ label_id: ['has already been taken'] });
      const list = (await labelListsOf(db, [board.id], listId))[0];
      return reply.code(201).send(presentBoardList(list));
    });

    route(app, {
      method: 'PUT', url: `${base}/:board_id/lists/:list_id`, auth: 'required',
      params: defineParams({ ...listParams, position: P.integer() }),
      schema: { summary: `Move a label list of a ${noun} issue board`, tags: ['boards'], response: { 200: BoardListSchema } },
    }, async ({ request, input }) => {
      const { parent, board, list } = await loadList(request, input);
      admin(parent);
      if (!await moveLabelList(db, board.id, list.id, input.position)) throw new ApiError(400, { error: 'List could not be moved!' });
      return presentBoardList((await labelListsOf(db, [board.id], list.id))[0]);
    });

    route(app, {
      method: 'DELETE', url: `${base}/:board_id/lists/:list_id`, auth: 'required', params: defineParams(listParams),
      schema: { summary: `Remove a label list from a ${noun} issue board`, tags: ['boards'] },
    }, async ({ request, reply, input }) => {
      const { parent, board, list } = await loadList(request, input);
      admin(parent);
      await deleteLabelList(db, board.id, list.id);
      return reply.code(204).send();
    });
  }
};

export default boards;
