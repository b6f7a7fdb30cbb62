/**
 * The activity feeds (lib/api/events.rb and the project events of lib/api/projects.rb, 15.2;
 * doc/api/events.md): the caller's own events (`GET /events`; `scope=all` for every project the
 * caller is a member of), a user's contributions (`GET /users/:id/events`; a private profile the
 * caller may not read gives an empty list, as EventsFinder returns Event.none) and a project's
 * (`GET /projects/:id/events`). Filters: `action`, `target_type`, `before`/`after` (days,
 * exclusive), `sort` (id, newest first by default). Events of projects the caller cannot see are
 * left out, and so are events the caller may not see on their own (a confidential issue's, a
 * push to a project whose code they may not read), checked per page as the Service does.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { UserRow } from '../../../db/types.ts';
import {
  EVENT_ACTIONS, EVENT_TARGET_TYPES, eventTargetsOf, findEvents, visibleEvents, type EventFilters, type EventSource,
} from '../../../domain/events/events.finder.ts';
import { findProjectsByIds } from '../../../domain/projects/projects-batch.queries.ts';
import { findUserByIdOrUsername } from '../../../domain/users/users.queries.ts';
import { notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { loadProject } from '../../loaders/containers.ts';
import { EventSchema, presentEvent } from '../../entities/event.ts';
import { route } from '../../route.ts';

const filterParams = {
  ...paginationParams,
  action: P.optional(P.oneOf(EVENT_ACTIONS, { description: 'only events of this action' })),
  target_type: P.optional(P.oneOf(Object.keys(EVENT_TARGET_TYPES) as (keyof typeof EVENT_TARGET_TYPES)[], {
    description: 'only events of this target type',
  })),
  before: P.optional(P.date({ description: 'only events created before this day (YYYY-MM-DD)' })),
  after: P.optional(P.date({ description: 'only events created after this day (YYYY-MM-DD)' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { description: 'by id; default desc' })),
};
const ownParams = defineParams({
  ...filterParams,
  scope: P.optional(P.string({ maxLength: 255, description: '`all`: events of every project the caller is a member of' })),
});
const userParams = defineParams({ ...filterParams, id: P.string({ maxLength: 255, description: 'ID or username of the user' }) });
const projectParams = defineParams({ ...filterParams, id: P.string({ description: 'ID or URL-encoded full path of the project' }) });

const EventList = Type.Array(EventSchema);

interface FilterInput {
  action?: EventFilters['action'];
  target_type?: EventFilters['targetType'];
  before?: string;
  after?: string;
  sort?: 'asc' | 'desc';
}

const filtersOf = (input: FilterInput): EventFilters => ({
  action: input.action, targetType: input.target_type, before: input.before, after: input.after, sort: input.sort ?? 'desc',
});

const events: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const externalUrl = config.externalUrl;

  async function list(request: FastifyRequest, reply: FastifyReply, viewer: UserRow | null, source: EventSource, input: FilterInput) {
    const found = await findEvents(db, viewer, source, filtersOf(input));
    const rows = await paginate(db, request, reply, found.query);
    const [projects, targets] = await Promise.all([
      findProjectsByIds(db, [...new Set(rows.map((e) => e.project_id).filter((id): id is number => id !== null))]),
      eventTargetsOf(db, rows),
    ]);
    const visible = visibleEvents(viewer, found.reach, rows, new Map(projects.map((p) => [p.id, p])), targets);
    return visible.map((e) => presentEvent(e, targets, { externalUrl }));
  }

  route(app, {
    method: 'GET', url: '/events', auth: 'required', scopes: ['read_user'], params: ownParams,
    schema: { summary: "The caller's events", tags: ['events'], response: { 200: EventList } },
  }, async ({ request, reply, input, caller }) => {
    const source: EventSource = input.scope === 'all' ? { kind: 'authorized' } : { kind: 'author', userId: caller.user.id };
    return list(request, reply, caller.user, source, input);
  });

  route(app, {
    method: 'GET', url: '/users/:id/events', auth: 'optional', scopes: ['read_user'], params: userParams,
    schema: { summary: "A user's contribution events", tags: ['events'], response: { 200: EventList } },
  }, async ({ request, reply, input, caller }) => {
    const user = await findUserByIdOrUsername(db, input.id);
    if (!user) throw notFound('User');
    const viewer = caller?.user ?? null;
    // UserPolicy read_user_profile: a private profile is its owner's and administrators' to read.
    const hidden = user.private_profile === 1 && viewer?.id !== user.id && viewer?.admin !== 1;
    return list(request, reply, viewer, hidden ? { kind: 'none' } : { kind: 'author', userId: user.id }, input);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/events', auth: 'optional', params: projectParams,
    schema: { summary: "A project's events", tags: ['events'], response: { 200: EventList } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    return list(request, reply, caller?.user ?? null, { kind: 'project', projectId: ctx.project.id }, input);
  });
};

export default events;
