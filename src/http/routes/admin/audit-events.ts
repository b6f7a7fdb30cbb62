/**
 * Audit events (the Service's ee/lib/api/audit_events.rb and the group and project ones, 15.2):
 * the instance's for administrators (filters entity_type, entity_id), a group's (with keyset
 * pagination: order_by=id, sort=desc only, spec Limits) and a project's for their developers and
 * up — every event for a group's owners and a project's maintainers, one's own events below that
 * (EE filter_by_author); newest first, each filterable by created_after and created_before. Who may
 * read is checked before the parameters, as the Service's `before` blocks do. What is recorded is
 * what kiln's own operations did (src/http/audit.ts callers).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { auditEventsQuery, findAuditEvent, type AuditEventFilters } from '../../../domain/audit-events/audit-events.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { notFound, recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { keysetParams, keysetRequested, keysetUnavailable, paginate, paginateKeyset, paginationParams } from '../../lists/pagination.ts';
import { authorizeGroup, authorizeProject, loadGroup, loadProject } from '../../loaders/containers.ts';
import { canOnGroup } from '../../../domain/permissions/group.policy.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { AuditEventSchema, presentAuditEvent } from '../../entities/audit-event.ts';
import { route } from '../../route.ts';
import type { Caller } from '../../context.ts';

const ENTITY_TYPES = ['User', 'Group', 'Project'] as const;
const dates = {
  created_after: P.optional(P.dateTime({ description: 'events created at or after this time' })),
  created_before: P.optional(P.dateTime({ description: 'events created at or before this time' })),
};
const instanceParams = defineParams({
  ...dates,
  entity_type: P.optional(P.oneOf(ENTITY_TYPES)),
  entity_id: P.optional(P.integer()),
  ...paginationParams,
});
const groupParams = defineParams({
  id: P.string(), ...dates, ...paginationParams, ...keysetParams,
  order_by: P.optional(P.oneOf(['id'] as const, { default: 'id' })),
  sort: P.optional(P.oneOf(['asc', 'desc'] as const, { default: 'desc' })),
});
const projectParams = defineParams({ id: P.string(), ...dates, ...paginationParams });
const oneParams = defineParams({ id: P.integer() });
const oneOfGroupParams = defineParams({ id: P.string(), audit_event_id: P.integer() });

const tags = ['audit events'];
const list = { 200: Type.Array(AuditEventSchema) };
const one = { 200: AuditEventSchema };

/** The path's `:id` as a `before` block sees it, ahead of parameter validation: a NUL names nothing (issue 13). */
const rawId = (request: FastifyRequest) => {
  const id = (request.params as { id?: string }).id ?? '';
  return id.includes('\0') ? '' : id;
};
const adminFirst = async (request: FastifyRequest) => {
  authenticatedAsAdmin(request);
};

const auditEvents: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;
  /** Whose events a caller may read in the group or project, decided by the route's guard. */
  const readers = new WeakMap<FastifyRequest, { entity: { type: string; id: number }; all: boolean }>();
  const scopeOf = (request: FastifyRequest) => readers.get(request)!;

  type FilterInput = { created_after?: string | null; created_before?: string | null; entity_type?: string; entity_id?: number | null };
  const filtersOf = (input: FilterInput, entity?: { type: string; id: number }): AuditEventFilters => {
    return {
      createdAfter: input.created_after ?? undefined,
      createdBefore: input.created_before ?? undefined,
      entityType: entity?.type ?? input.entity_type,
      entityId: entity?.id ?? input.entity_id ?? undefined,
    };
  };
  const page = async (request: FastifyRequest, reply: FastifyReply, f: AuditEventFilters) =>
    (await paginate(db, request, reply, auditEventsQuery(db, f).orderBy('id', 'desc'))).map(presentAuditEvent);
  const single = async (id: number, f: AuditEventFilters) => {
    const row = await findAuditEvent(db, id, f);
    // The instance's route says not_found!('Audit Event'); a group's or project's uses find_by! (RecordNotFound).
    if (!row) throw f.entityType ? recordNotFound() : notFound('Audit Event');
    return presentAuditEvent(row);
  };
  /** Those who may not read everyone's events read their own (the author filter). */
  const ownFilters = (request: FastifyRequest, input: FilterInput, caller: Caller): AuditEventFilters => {
    const { entity, all } = scopeOf(request);
    return { ...filtersOf(input, entity), ...(all ? {} : { authorId: caller.user.id }) };
  };

  route(app, {
    method: 'GET', url: '/audit_events', auth: 'required', params: instanceParams, preValidation: adminFirst,
    schema: { summary: "The instance's audit events, newest first (administrators)", tags, response: list },
  }, async ({ request, reply, input }) => {
    return page(request, reply, filtersOf(input));
  });

  route(app, {
    method: 'GET', url: '/audit_events/:id', auth: 'required', params: oneParams, preValidation: adminFirst,
    schema: { summary: 'One audit event (administrators)', tags, response: one },
  }, async ({ input }) => {
    return single(input.id, {});
  });

  async function groupReader(request: FastifyRequest) {
    const ctx = await loadGroup(request, rawId(request));
    authorizeGroup(ctx, 'read_group_audit_events');
    const all = canOnGroup(ctx.actor, 'admin_group', ctx.group);
    readers.set(request, { entity: { type: 'Group', id: ctx.group.id }, all });
  }

  route(app, {
    method: 'GET', url: '/groups/:id/audit_events', auth: 'required', params: groupParams, preValidation: groupReader,
    schema: {
      summary: "A group's audit events, newest first (developers: their own); keyset with order_by=id&sort=desc", tags, response: list,
    },
  }, async ({ request, reply, input, caller }) => {
    const f = ownFilters(request, input, caller);
    if (!keysetRequested(input)) return page(request, reply, f);
    // Keyset only in the order the Service offers for group audit events (spec, Limits).
    if (input.sort !== 'desc') throw keysetUnavailable();
    return (await paginateKeyset(request, reply, auditEventsQuery(db, f), {
      orderBy: input.order_by, supported: ['id'], sort: 'desc',
    })).map(presentAuditEvent);
  });

  route(app, {
    method: 'GET', url: '/groups/:id/audit_events/:audit_event_id', auth: 'required', params: oneOfGroupParams, preValidation: groupReader,
    schema: { summary: "One of a group's audit events (developers: their own)", tags, response: one },
  }, async ({ request, input, caller }) => {
    return single(input.audit_event_id, ownFilters(request, {}, caller));
  });

  async function projectReader(request: FastifyRequest) {
    const ctx = await loadProject(request, rawId(request));
    authorizeProject(ctx, 'read_project_audit_events');
    // admin_project (Maintainer) sees every member's events.
    const all = canOnProject(ctx.actor, 'update_project', ctx.project);
    readers.set(request, { entity: { type: 'Project', id: ctx.project.id }, all });
  }

  route(app, {
    method: 'GET', url: '/projects/:id/audit_events', auth: 'required', params: projectParams, preValidation: projectReader,
    schema: { summary: "A project's audit events, newest first (developers: their own)", tags, response: list },
  }, async ({ request, reply, input, caller }) => {
    return page(request, reply, ownFilters(request, input, caller));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/audit_events/:audit_event_id', auth: 'required', params: oneOfGroupParams,
    preValidation: projectReader,
    schema: { summary: "One of a project's audit events (developers: their own)", tags, response: one },
  }, async ({ request, input, caller }) => {
    return single(input.audit_event_id, ownFilters(request, {}, caller));
  });
};

export default auditEvents;
