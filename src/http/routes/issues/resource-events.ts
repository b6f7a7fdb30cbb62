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
  labelEventsOfIssue, labelsByIds, milestoneEventsOfIssue, stateEventsOfIssue,
} from '../../../domain/issues/resource-events.queries.ts';
import { recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { loadProject } from '../../loaders/containers.ts';
import { loadIssue } from '../../loaders/issues.ts';
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
const listParams = defineParams({ id, issue_iid: P.integer(), ...paginationParams });
const oneParams = defineParams({ id, issue_iid: P.integer(), event_id: P.integer() });

interface EventRowBase { id: number; issue_id: number | null; user_id: number | null; created_at: string }

/** The non-null values of one column of a page of rows. */
const idsOf = <R, K extends keyof R>(rows: readonly R[], key: K) => rows.flatMap((r) => (r[key] === null ? [] : [r[key] as number]));

const resourceEvents: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function readableIssue(request: FastifyRequest, input: { id: string; issue_iid: number }) {
    const ctx = await loadProject(request, input.id);
    return (await loadIssue(request, ctx, input.issue_iid)).issue;
  }

  async function commons(rows: readonly EventRowBase[]) {
    const users = new Map((await findUsersByIds(db, idsOf(rows, 'user_id'))).map((u) => [u.id, u]));
    return (r: EventRowBase) => {
      const u = r.user_id !== null ? users.get(r.user_id) : undefined;
      return {
        id: r.id, user: u ? presentUserBasic(u, {}, { externalUrl: config.externalUrl, canReadProfile: false }) : null,
        created_at: r.created_at, resource_type: 'Issue', resource_id: r.issue_id!,
      };
    };
  }

  async function presentLabelEvents(
    rows: readonly (EventRowBase & { label_id: number | null; action: string })[],
  ): Promise<ResourceLabelEvent[]> {
    const [base, labels] = await Promise.all([commons(rows), labelsByIds(db, idsOf(rows, 'label_id'))]);
    return rows.map((r) => {
      const label = r.label_id !== null ? labels.get(r.label_id) : undefined;
      return { ...base(r), label: label ? presentLabelBasic(label) : null, action: r.action };
    });
  }

  async function presentMilestoneEvents(
    rows: readonly (EventRowBase & { milestone_id: number | null; action: string; state: string })[],
  ): Promise<ResourceMilestoneEvent[]> {
    const [base, milestones] = await Promise.all([
      commons(rows), milestonesByIds(db, idsOf(rows, 'milestone_id')),
    ]);
    const paths = await milestonePathsOf(db, [...milestones.values()]);
    return rows.map((r) => {
      const m = r.milestone_id !== null ? milestones.get(r.milestone_id) : undefined;
      const milestone = m ? presentMilestone(m, milestoneOwnerUrl(m, config.externalUrl, paths)) : null;
      return { ...base(r), milestone, action: r.action, state: r.state };
    });
  }

  async function presentStateEvents(rows: readonly (EventRowBase & { state: string })[]): Promise<ResourceStateEvent[]> {
    const base = await commons(rows);
    return rows.map((r) => ({ ...base(r), state: r.state }));
  }

  route(app, {
    method: 'GET', url: '/projects/:id/issues/:issue_iid/resource_label_events', auth: 'optional', params: listParams,
    schema: {
      summary: "An issue's label events", tags: ['resource_label_events'], response: { 200: Type.Array(ResourceLabelEventSchema) },
    },
  }, async ({ request, reply, input }) => {
    const issue = await readableIssue(request, input);
    return presentLabelEvents(await paginate(db, request, reply, labelEventsOfIssue(db, issue.id)));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/issues/:issue_iid/resource_label_events/:event_id', auth: 'optional', params: oneParams,
    schema: {
      summary: 'A label event of an issue', tags: ['resource_label_events'], response: { 200: ResourceLabelEventSchema },
    },
  }, async ({ request, input }) => {
    const issue = await readableIssue(request, input);
    const row = await labelEventsOfIssue(db, issue.id).where('id', '=', input.event_id).executeTakeFirst();
    if (!row) throw recordNotFound();
    return (await presentLabelEvents([row]))[0];
  });

  route(app, {
    method: 'GET', url: '/projects/:id/issues/:issue_iid/resource_milestone_events', auth: 'optional', params: listParams,
    schema: {
      summary: "An issue's milestone events", tags: ['resource_milestone_events'],
      response: { 200: Type.Array(ResourceMilestoneEventSchema) },
    },
  }, async ({ request, reply, input }) => {
    const issue = await readableIssue(request, input);
    return presentMilestoneEvents(await paginate(db, request, reply, milestoneEventsOfIssue(db, issue.id)));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/issues/:issue_iid/resource_milestone_events/:event_id', auth: 'optional', params: oneParams,
    schema: {
      summary: 'A milestone event of an issue', tags: ['resource_milestone_events'], response: { 200: ResourceMilestoneEventSchema },
    },
  }, async ({ request, input }) => {
    const issue = await readableIssue(request, input);
    const row = await milestoneEventsOfIssue(db, issue.id).where('id', '=', input.event_id).executeTakeFirst();
    if (!row) throw recordNotFound();
    return (await presentMilestoneEvents([row]))[0];
  });

  route(app, {
    method: 'GET', url: '/projects/:id/issues/:issue_iid/resource_state_events', auth: 'optional', params: listParams,
    schema: {
      summary: "An issue's state events", tags: ['resource_state_events'], response: { 200: Type.Array(ResourceStateEventSchema) },
    },
  }, async ({ request, reply, input }) => {
    const issue = await readableIssue(request, input);
    return presentStateEvents(await paginate(db, request, reply, stateEventsOfIssue(db, issue.id)));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/issues/:issue_iid/resource_state_events/:event_id', auth: 'optional', params: oneParams,
    schema: {
      summary: 'A state event of an issue', tags: ['resource_state_events'], response: { 200: ResourceStateEventSchema },
    },
  }, async ({ request, input }) => {
    const issue = await readableIssue(request, input);
    const row = await stateEventsOfIssue(db, issue.id).where('id', '=', input.event_id).executeTakeFirst();
    if (!row) throw recordNotFound();
    return (await presentStateEvents([row]))[0];
  });
};

export default resourceEvents;
