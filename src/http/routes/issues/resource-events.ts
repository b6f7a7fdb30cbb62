/**
 * An issue's resource events (lib/api/resource_label_events.rb, resource_milestone_events.rb,
 * resource_state_events.rb of the Service 15.2; doc/api/resource_*_events.md): the history of
 * its labels, milestone and state, paged oldest first, and one event by id (`404 Not found` when
 * the issue has no such event). Whoever may read the issue may read its history.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { findUsersByIds } from '../../../domain/users/users-batch.queries.ts';
import { milestonesByIds } from '../../../domain/issues/issues.queries.ts';
import {
  labelEventsOf, labelsByIds, milestoneEventsOf, stateEventsOf, type ResourceOwnerColumn,
} from '../../../domain/issues/resource-events.queries.ts';
import { recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { loadProject } from '../../loaders/containers.ts';
import { loadIssue } from '../../loaders/issues.ts';
import { loadMergeRequest } from '../../loaders/merge-requests.ts';
import { milestoneOwnerUrl, milestonePathsOf } from '../../entities/issue.ts';
import { presentLabelBasic } from '../../entities/label.ts';
import { presentMilestone } from '../../entities/milestone.ts';
import {
  ResourceLabelEventSchema, ResourceMilestoneEventSchema, ResourceStateEventSchema,
  type ResourceLabelEvent, type ResourceMilestoneEvent, type ResourceStateEvent,
} from '../../entities/resource-event.ts';
import { presentUserBasic } from '../../entities/user.ts';
import { route } from '../../route.ts';

const id = P.string({ description: 'ID or URL-encoded full path of the project' });

interface EventRowBase { id: number; issue_id: number | null; merge_request_id: number | null; user_id: number | null; created_at: string }
type EventRow = EventRowBase & Record<string, unknown>;

/** The non-null values of one column of a page of rows. */
const idsOf = <R, K extends keyof R>(rows: readonly R[], key: K) => rows.flatMap((r) => (r[key] === null ? [] : [r[key] as number]));

const resourceEvents: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function readableIssue(request: FastifyRequest, input: { id: string; iid: number }): Promise<number> {
    const ctx = await loadProject(request, input.id);
    return (await loadIssue(request, ctx, input.iid)).issue.id;
  }

  async function readableMergeRequest(request: FastifyRequest, input: { id: string; iid: number }): Promise<number> {
    const ctx = await loadProject(request, input.id);
    return (await loadMergeRequest(request, ctx, input.iid)).mr.id;
  }

  async function commons(rows: readonly EventRowBase[], type: string) {
    const users = new Map((await findUsersByIds(db, idsOf(rows, 'user_id'))).map((u) => [u.id, u]));
    return (r: EventRowBase) => {
      const u = r.user_id !== null ? users.get(r.user_id) : undefined;
      return {
        id: r.id, user: u ? presentUserBasic(u, {}, { externalUrl: config.externalUrl, canReadProfile: false }) : null,
        created_at: r.created_at, resource_type: type, resource_id: (r.issue_id ?? r.merge_request_id)!,
      };
    };
  }

  async function presentLabelEvents(
    rows: readonly (EventRowBase & { label_id: number | null; action: string })[], type: string,
  ): Promise<ResourceLabelEvent[]> {
    const [base, labels] = await Promise.all([commons(rows, type), labelsByIds(db, idsOf(rows, 'label_id'))]);
    return rows.map((r) => {
      const label = r.label_id !== null ? labels.get(r.label_id) : undefined;
      return { ...base(r), label: label ? presentLabelBasic(label) : null, action: r.action };
    });
  }

  async function presentMilestoneEvents(
    rows: readonly (EventRowBase & { milestone_id: number | null; action: string; state: string })[], type: string,
  ): Promise<ResourceMilestoneEvent[]> {
    const [base, milestones] = await Promise.all([
      commons(rows, type), milestonesByIds(db, idsOf(rows, 'milestone_id')),
    ]);
    const paths = await milestonePathsOf(db, [...milestones.values()]);
    return rows.map((r) => {
      const m = r.milestone_id !== null ? milestones.get(r.milestone_id) : undefined;
      const milestone = m ? presentMilestone(m, milestoneOwnerUrl(m, config.externalUrl, paths)) : null;
      return { ...base(r), milestone, action: r.action, state: r.state };
    });
  }

  async function presentStateEvents(rows: readonly (EventRowBase & { state: string })[], type: string): Promise<ResourceStateEvent[]> {
    const base = await commons(rows, type);
    return rows.map((r) => ({ ...base(r), state: r.state }));
  }

  // The same six routes for issues and merge requests (the Service's resource events APIs serve both eventables).
  const kinds = [
    { segment: 'issues', param: 'issue_iid', name: 'an issue', type: 'Issue', column: 'issue_id', load: readableIssue },
    { segment: 'merge_requests', param: 'merge_request_iid', name: 'a merge request', type: 'MergeRequest', column: 'merge_request_id',
      load: readableMergeRequest },
  ] as const;
  const events = [
    { path: 'resource_label_events', what: 'label', schema: ResourceLabelEventSchema, query: labelEventsOf, present: presentLabelEvents },
    {
      path: 'resource_milestone_events', what: 'milestone', schema: ResourceMilestoneEventSchema, query: milestoneEventsOf,
      present: presentMilestoneEvents,
    },
    { path: 'resource_state_events', what: 'state', schema: ResourceStateEventSchema, query: stateEventsOf, present: presentStateEvents },
  ] as const;
  for (const kind of kinds) {
    const list = defineParams({ id, [kind.param]: P.integer(), ...paginationParams });
    const one = defineParams({ id, [kind.param]: P.integer(), event_id: P.integer() });
    for (const e of events) {
      const query = e.query as (db: typeof app.kiln.db, column: ResourceOwnerColumn, id: number) => ReturnType<typeof labelEventsOf>;
      const present = e.present as unknown as (rows: readonly EventRow[], type: string) => Promise<unknown[]>;
      route(app, {
        method: 'GET', url: `/projects/:id/${kind.segment}/:${kind.param}/${e.path}`, auth: 'optional', params: list,
        schema: { summary: `The ${e.what} events of ${kind.name}`, tags: [e.path], response: { 200: Type.Array(e.schema) } },
      }, async ({ request, reply, input }) => {
        const ownerId = await kind.load(request, { id: input.id as string, iid: (input as Record<string, unknown>)[kind.param] as number });
        return present(await paginate(db, request, reply, query(db, kind.column, ownerId)), kind.type);
      });
      route(app, {
        method: 'GET', url: `/projects/:id/${kind.segment}/:${kind.param}/${e.path}/:event_id`, auth: 'optional', params: one,
        schema: { summary: `A ${e.what} event of ${kind.name}`, tags: [e.path], response: { 200: e.schema } },
      }, async ({ request, input }) => {
        const ownerId = await kind.load(request, { id: input.id as string, iid: (input as Record<string, unknown>)[kind.param] as number });
        const eventId = (input as Record<string, unknown>).event_id as number;
        const row = await query(db, kind.column, ownerId).where('id', '=', eventId).executeTakeFirst();
        if (!row) throw recordNotFound();
        return (await present([row], kind.type))[0];
      });
    }
  }
};

export default resourceEvents;
