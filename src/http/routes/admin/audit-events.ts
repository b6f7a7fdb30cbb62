/**
 * Audit events (the Service's ee/lib/api/audit_events.rb and the group and project ones, 15.2):
 * the instance's for administrators (filters entity_type, entity_id), a group's for its owners
 * (with keyset pagination: order_by=id, sort=desc only, spec Limits), a project's for its
 * maintainers; newest first, each filterable by created_after and created_before. What is recorded
 * is what kiln's own operations did (src/http/audit.ts callers).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { auditEventsQuery, findAuditEvent, type AuditEventFilters } from '../../../domain/audit-events/audit-events.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { keysetParams, keysetRequested, keysetUnavailable, paginate, paginateKeyset, paginationParams } from '../../lists/pagination.ts';
import { authorizeGroup, authorizeProject, loadGroup, loadProject } from '../../loaders/containers.ts';
import { AuditEventSchema, presentAuditEvent } from '../../entities/audit-event.ts';
import { route } from '../../route.ts';

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

const auditEvents: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

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
    if (!row) throw notFound('Audit Event');
    return presentAuditEvent(row);
  };

  route(app, {
    method: 'GET', url: '/audit_events', auth: 'required', params: instanceParams,
    schema: { summary: "The instance's audit events, newest first (administrators)", tags, response: list },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    return page(request, reply, filtersOf(input));
  });

  route(app, {
    method: 'GET', url: '/audit_events/:id', auth: 'required', params: oneParams,
    schema: { summary: 'One audit event (administrators)', tags, response: one },
  }, async ({ request, input }) => {
    authenticatedAsAdmin(request);
    return single(input.id, {});
  });

  async function ownedGroup(request: FastifyRequest, id: string) {
    const ctx = await loadGroup(request, id);
    authorizeGroup(ctx, 'admin_group');
    return ctx;
  }

  route(app, {
    method: 'GET', url: '/groups/:id/audit_events', auth: 'required', params: groupParams,
    schema: { summary: "A group's audit events, newest first (owners); keyset with order_by=id&sort=desc", tags, response: list },
  }, async ({ request, reply, input }) => {
    const ctx = await ownedGroup(request, input.id);
    const f = filtersOf(input, { type: 'Group', id: ctx.group.id });
    if (!keysetRequested(input)) return page(request, reply, f);
    // Keyset only in the order the Service offers for group audit events (spec, Limits).
    if (input.sort !== 'desc') throw keysetUnavailable();
    return (await paginateKeyset(request, reply, auditEventsQuery(db, f), { orderBy: input.order_by, supported: ['id'], sort: 'desc' })).map(presentAuditEvent);
  });

  route(app, {
    method: 'GET', url: '/groups/:id/audit_events/:audit_event_id', auth: 'required', params: oneOfGroupParams,
    schema: { summary: "One of a group's audit events (owners)", tags, response: one },
  }, async ({ request, input }) => {
    const ctx = await ownedGroup(request, input.id);
    return single(input.audit_event_id, { entityType: 'Group', entityId: ctx.group.id });
  });

  async function maintainedProject(request: FastifyRequest, id: string) {
    const ctx = await loadProject(request, id);
    authorizeProject(ctx, 'update_project');
    return ctx;
  }

  route(app, {
    method: 'GET', url: '/projects/:id/audit_events', auth: 'required', params: projectParams,
    schema: { summary: "A project's audit events, newest first (maintainers)", tags, response: list },
  }, async ({ request, reply, input }) => {
    const ctx = await maintainedProject(request, input.id);
    return page(request, reply, filtersOf(input, { type: 'Project', id: ctx.project.id }));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/audit_events/:audit_event_id', auth: 'required', params: oneOfGroupParams,
    schema: { summary: "One of a project's audit events (maintainers)", tags, response: one },
  }, async ({ request, input }) => {
    const ctx = await maintainedProject(request, input.id);
    return single(input.audit_event_id, { entityType: 'Project', entityId: ctx.project.id });
  });
};

export default auditEvents;
