/**
 * Labels of projects and groups (lib/api/labels.rb, group_labels.rb, subscriptions.rb and
 * helpers/label_helpers.rb, 15.2). Every route needs a signed-in caller (`before { authenticate! }`).
 * A label is named in the path by id or by title (id first); the deprecated forms that name it by
 * `label_id`/`name` parameters on the collection stay. Reading takes read_label on the project
 * (or read_group on the group); writing takes admin_label (Reporter) on the label's owner.
 * Promoting merges a project label into its group (domain/labels/promote-label.ts).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { LabelRow } from '../../../db/tables/labels.ts';
import { createLabel } from '../../../domain/labels/create-label.ts';
import { updateLabel } from '../../../domain/labels/update-label.ts';
import { promoteLabel } from '../../../domain/labels/promote-label.ts';
import {
  deleteLabelRow, findLabelInScope, labelsQuery, setLabelSubscription, subscribedLabelIds, type LabelScope,
} from '../../../domain/labels/labels.queries.ts';
import { projectsInNamespaces } from '../../../domain/projects/projects.queries.ts';
import { groupActor } from '../../../domain/permissions/actors.ts';
import { canOnGroup } from '../../../domain/permissions/group.policy.ts';
import { namespacePathsById } from '../../../domain/namespaces/namespaces.queries.ts';
import { GroupLabelSchema, ProjectLabelSchema } from '../../entities/label.ts';
import { ApiError, conflict, invalidParams, forbidden, notFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import {
  authorizeGroup, authorizeProject, loadGroup, loadProject, type GroupContext, type ProjectContext,
} from '../../loaders/containers.ts';
import { route } from '../../route.ts';
import {
  authorizeLabelAdmin, groupLabelScope, presentGroupLabels, presentProjectLabels, projectGroupId, projectLabelScope,
} from './label-context.ts';

const projectId = { id: P.string({ description: 'ID or URL-encoded full path of the project' }) };
const groupId = { id: P.string({ description: 'ID or URL-encoded full path of the group' }) };
const labelRef = { label_id: P.string({ maxLength: 1024, description: 'ID or title of the label' }) };
const priority = P.integer({ minimum: 0, description: 'priority in the project (lower first); empty removes it' });
const createFields = {
  name: P.string({ description: 'title of the label' }),
  color: P.string({ description: '#rrggbb, #rgb or a CSS colour name' }),
  description: P.optional(P.string()),
};
const updateFields = {
  new_name: P.optional(P.string()),
  color: P.optional(P.string()),
  description: P.optional(P.string()),
};
const withCounts = P.optional(P.boolean({ default: false, description: 'add issue and merge request counts' }));
const includeAncestors = P.optional(P.boolean({ default: true }));
const includeDescendants = P.optional(P.boolean({ default: false }));
const onlyGroupLabels = P.optional(P.boolean({ default: true }));
const search = P.optional(P.string({ maxLength: 255 }));

const labelNotFound = () => notFound('Label');

const labels: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  async function projectLabel(ctx: ProjectContext, ref: string, includeAncestorGroups: boolean): Promise<LabelRow> {
    const label = await findLabelInScope(db, projectLabelScope(ctx, includeAncestorGroups), ref);
    if (!label) throw labelNotFound();
    return label;
  }

  async function readableProject(request: FastifyRequest, id: string): Promise<ProjectContext> {
    const ctx = await loadProject(request, id);
    authorizeProject(ctx, 'read_label');
    return ctx;
  }

  async function groupLabel(request: FastifyRequest, ctx: GroupContext, ref: string, scope?: LabelScope): Promise<LabelRow> {
    const s = scope ?? await groupLabelScope(request, ctx, { includeAncestors: false, includeDescendants: false, onlyGroupLabels: true });
    const label = await findLabelInScope(db, s, ref);
    if (!label) throw labelNotFound();
    return label;
  }

  // ---- project labels ----

  route(app, {
    method: 'GET', url: '/projects/:id/labels', auth: 'required',
    params: defineParams({ ...projectId, with_counts: withCounts, include_ancestor_groups: includeAncestors, search, ...paginationParams }),
    schema: { summary: "A project's labels and its groups'", tags: ['labels'], response: { 200: Type.Array(ProjectLabelSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await readableProject(request, input.id);
    const rows = await paginate(db, request, reply, labelsQuery(db, projectLabelScope(ctx, input.include_ancestor_groups), {
      search: input.search,
    }));
    return presentProjectLabels(request, ctx, rows, input.with_counts);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/labels/:label_id', auth: 'required',
    params: defineParams({ ...projectId, ...labelRef, include_ancestor_groups: includeAncestors }),
    schema: { summary: 'A label of a project', tags: ['labels'], response: { 200: ProjectLabelSchema } },
  }, async ({ request, input }) => {
    const ctx = await readableProject(request, input.id);
    const label = await projectLabel(ctx, input.label_id, input.include_ancestor_groups);
    return (await presentProjectLabels(request, ctx, [label], false))[0];
  });

  route(app, {
    method: 'POST', url: '/projects/:id/labels', auth: 'required',
    params: defineParams({ ...projectId, ...createFields, priority: P.optional(priority) }),
    schema: { summary: 'Create a project label', tags: ['labels'], response: { 201: ProjectLabelSchema } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_label');
    const result = await createLabel(db, { projectId: ctx.project.id }, projectLabelScope(ctx, true), {
      title: input.name, color: input.color, description: input.description, priority: input.priority,
    });
    if (!result.ok) throw result.reason === 'exists' ? conflict('Label already exists') : validationFailed(result.errors);
    return reply.code(201).send((await presentProjectLabels(request, ctx, [result.label], false))[0]);
  });

  async function updateProjectLabel(
    request: FastifyRequest, ctx: ProjectContext, ref: string,
    input: { new_name?: string; color?: string; description?: string; priority?: number },
  ) {
    authorizeProject(ctx, 'admin_label');
    // The Service's update_label finds the label among the project's and its group's only.
    const label = await projectLabel(ctx, ref, false);
    const changes = input.new_name !== undefined || input.color !== undefined || input.description !== undefined;
    if (changes) await authorizeLabelAdmin(request, label, ctx);
    // `priority=` (blank) removes the priority: given, without a value.
    const given: number | null | undefined = input.priority;
    const result = await updateLabel(db, label, {
      title: input.new_name, color: input.color, description: input.description,
      priority: given === undefined ? undefined : { projectId: ctx.project.id, value: given },
    });
    if (!result.ok) throw validationFailed(result.errors);
    return (await presentProjectLabels(request, ctx, [result.label], false))[0];
  }

  const updateRule = { atLeastOneOf: [['new_name', 'color', 'description', 'priority']] };

  route(app, {
    method: 'PUT', url: '/projects/:id/labels/:label_id', auth: 'required',
    params: defineParams({ ...projectId, ...labelRef, ...updateFields, priority: P.optional(priority) }, updateRule),
    schema: { summary: 'Change a project label', tags: ['labels'], response: { 200: ProjectLabelSchema } },
  }, async ({ request, input }) => updateProjectLabel(request, await loadProject(request, input.id), input.label_id, input));

  route(app, {
    method: 'PUT', url: '/projects/:id/labels', auth: 'required',
    params: defineParams({
      ...projectId, label_id: P.optional(P.integer()), name: P.optional(P.string({ maxLength: 1024 })),
      ...updateFields, priority: P.optional(priority),
    }, { ...updateRule, mutuallyExclusive: [['label_id', 'name']] }),
    schema: {
      summary: 'Change a project label named by parameter (deprecated form)', tags: ['labels'], response: { 200: ProjectLabelSchema },
    },
  }, async ({ request, input }) => {
    const ref = exactlyOne(input.label_id, input.name);
    return updateProjectLabel(request, await loadProject(request, input.id), ref, input);
  });

  async function deleteProjectLabel(request: FastifyRequest, id: string, ref: string): Promise<void> {
    const ctx = await loadProject(request, id);
    const label = await projectLabel(ctx, ref, false);
    await authorizeLabelAdmin(request, label, ctx);
    await deleteLabelRow(db, label.id);
  }

  route(app, {
    method: 'DELETE', url: '/projects/:id/labels/:label_id', auth: 'required', params: defineParams({ ...projectId, ...labelRef }),
    schema: { summary: 'Delete a project label', tags: ['labels'] },
  }, async ({ request, reply, input }) => {
    await deleteProjectLabel(request, input.id, input.label_id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'DELETE', url: '/projects/:id/labels', auth: 'required',
    params: defineParams({ ...projectId, label_id: P.optional(P.integer()), name: P.optional(P.string({ maxLength: 1024 })) }, {
      mutuallyExclusive: [['label_id', 'name']],
    }),
    schema: { summary: 'Delete a project label named by parameter (deprecated form)', tags: ['labels'] },
  }, async ({ request, reply, input }) => {
    await deleteProjectLabel(request, input.id, exactlyOne(input.label_id, input.name));
    return reply.code(204).send();
  });

  async function promote(request: FastifyRequest, id: string, ref: string) {
    const ctx = await loadProject(request, id);
    const groupIdOfProject = projectGroupId(ctx);
    if (groupIdOfProject === null) throw new ApiError(400, { message: 'Failed to promote project label to group label' });
    const paths = (await namespacePathsById(db, [groupIdOfProject])).get(groupIdOfProject)!;
    const actor = await groupActor(db, request.caller?.user ?? null, paths.lineage);
    if (!canOnGroup(actor, 'admin_label', paths.namespace)) throw forbidden();
    const label = await projectLabel(ctx, ref, false);
    if (label.project_id === null) throw new ApiError(400, { message: 'Failed to promote project label to group label' });
    const groupProjects = await projectsInNamespaces(db, [groupIdOfProject]).clearSelect().select('projects.id').execute();
    const promoted = await promoteLabel(db, label, groupIdOfProject, groupProjects.map((p) => p.id));
    return (await presentGroupLabels(request, [promoted], false))[0];
  }

  route(app, {
    method: 'PUT', url: '/projects/:id/labels/:label_id/promote', auth: 'required', params: defineParams({ ...projectId, ...labelRef }),
    schema: { summary: "Promote a project label to its group's", tags: ['labels'], response: { 200: GroupLabelSchema } },
  }, async ({ request, input }) => promote(request, input.id, input.label_id));

  route(app, {
    method: 'PUT', url: '/projects/:id/labels/promote', auth: 'required',
    params: defineParams({ ...projectId, name: P.string({ maxLength: 1024 }) }),
    schema: { summary: "Promote a project label to its group's (deprecated form)", tags: ['labels'], response: { 200: GroupLabelSchema } },
  }, async ({ request, input }) => promote(request, input.id, input.name));

  // Subscriptions (lib/api/subscriptions.rb): 304 when nothing changes, else 201 with the label.
  for (const [verb, subscribe] of [['subscribe', true], ['unsubscribe', false]] as const) {
    route(app, {
      method: 'POST', url: `/projects/:id/labels/:label_id/${verb}`, auth: 'required', params: defineParams({ ...projectId, ...labelRef }),
      schema: {
        summary: `${subscribe ? 'Subscribe to' : 'Unsubscribe from'} a project label`, tags: ['labels'],
        response: { 201: ProjectLabelSchema, 304: Type.Null() },
      },
    }, async ({ request, reply, input, caller }) => {
      const ctx = await readableProject(request, input.id);
      const label = await projectLabel(ctx, input.label_id, true);
      const now = (await subscribedLabelIds(db, caller.user.id, [label.id])).has(label.id);
      if (now === subscribe) return reply.code(304).send();
      await setLabelSubscription(db, caller.user.id, label.id, ctx.project.id, subscribe);
      return reply.code(201).send((await presentProjectLabels(request, ctx, [label], false))[0]);
    });
  }

  // ---- group labels ----

  route(app, {
    method: 'GET', url: '/groups/:id/labels', auth: 'required',
    params: defineParams({
      ...groupId, with_counts: withCounts, include_ancestor_groups: includeAncestors, include_descendant_groups: includeDescendants,
      only_group_labels: onlyGroupLabels, search, ...paginationParams,
    }),
    schema: { summary: "A group's labels", tags: ['labels'], response: { 200: Type.Array(GroupLabelSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadGroup(request, input.id);
    const scope = await groupLabelScope(request, ctx, {
      includeAncestors: input.include_ancestor_groups, includeDescendants: input.include_descendant_groups,
      onlyGroupLabels: input.only_group_labels,
    });
    const rows = await paginate(db, request, reply, labelsQuery(db, scope, { search: input.search }));
    return presentGroupLabels(request, rows, input.with_counts);
  });

  route(app, {
    method: 'GET', url: '/groups/:id/labels/:label_id', auth: 'required',
    params: defineParams({
      ...groupId, ...labelRef, include_ancestor_groups: includeAncestors, include_descendant_groups: includeDescendants,
      only_group_labels: onlyGroupLabels,
    }),
    schema: { summary: 'A label of a group', tags: ['labels'], response: { 200: GroupLabelSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadGroup(request, input.id);
    const scope = await groupLabelScope(request, ctx, {
      includeAncestors: input.include_ancestor_groups, includeDescendants: input.include_descendant_groups,
      onlyGroupLabels: input.only_group_labels,
    });
    return (await presentGroupLabels(request, [await groupLabel(request, ctx, input.label_id, scope)], false))[0];
  });

  route(app, {
    method: 'POST', url: '/groups/:id/labels', auth: 'required', params: defineParams({ ...groupId, ...createFields }),
    schema: { summary: 'Create a group label', tags: ['labels'], response: { 201: GroupLabelSchema } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadGroup(request, input.id);
    authorizeGroup(ctx, 'admin_label');
    const result = await createLabel(db, { groupId: ctx.group.id }, { projectIds: [], groupIds: ctx.lineage }, {
      title: input.name, color: input.color, description: input.description,
    });
    if (!result.ok) throw result.reason === 'exists' ? conflict('Label already exists') : validationFailed(result.errors);
    return reply.code(201).send((await presentGroupLabels(request, [result.label], false))[0]);
  });

  async function updateGroupLabel(
    request: FastifyRequest, id: string, ref: string, input: { new_name?: string; color?: string; description?: string },
  ) {
    const ctx = await loadGroup(request, id);
    authorizeGroup(ctx, 'admin_label');
    const label = await groupLabel(request, ctx, ref);
    const result = await updateLabel(db, label, { title: input.new_name, color: input.color, description: input.description });
    if (!result.ok) throw validationFailed(result.errors);
    return (await presentGroupLabels(request, [result.label], false))[0];
  }

  const groupUpdateRule = { atLeastOneOf: [['new_name', 'color', 'description']] };

  route(app, {
    method: 'PUT', url: '/groups/:id/labels/:label_id', auth: 'required',
    params: defineParams({ ...groupId, ...labelRef, ...updateFields }, groupUpdateRule),
    schema: { summary: 'Change a group label', tags: ['labels'], response: { 200: GroupLabelSchema } },
  }, async ({ request, input }) => updateGroupLabel(request, input.id, input.label_id, input));

  route(app, {
    method: 'PUT', url: '/groups/:id/labels', auth: 'required',
    params: defineParams({
      ...groupId, label_id: P.optional(P.integer()), name: P.optional(P.string({ maxLength: 1024 })), ...updateFields,
    }, { ...groupUpdateRule, mutuallyExclusive: [['label_id', 'name']] }),
    schema: {
      summary: 'Change a group label named by parameter (deprecated form)', tags: ['labels'], response: { 200: GroupLabelSchema },
    },
  }, async ({ request, input }) => updateGroupLabel(request, input.id, exactlyOne(input.label_id, input.name), input));

  async function deleteGroupLabel(request: FastifyRequest, id: string, ref: string): Promise<void> {
    const ctx = await loadGroup(request, id);
    authorizeGroup(ctx, 'admin_label');
    await deleteLabelRow(db, (await groupLabel(request, ctx, ref)).id);
  }

  route(app, {
    method: 'DELETE', url: '/groups/:id/labels/:label_id', auth: 'required', params: defineParams({ ...groupId, ...labelRef }),
    schema: { summary: 'Delete a group label', tags: ['labels'] },
  }, async ({ request, reply, input }) => {
    await deleteGroupLabel(request, input.id, input.label_id);
    return reply.code(204).send();
  });

  route(app, {
    method: 'DELETE', url: '/groups/:id/labels', auth: 'required',
    params: defineParams({ ...groupId, label_id: P.optional(P.integer()), name: P.optional(P.string({ maxLength: 1024 })) }, {
      mutuallyExclusive: [['label_id', 'name']],
    }),
    schema: { summary: 'Delete a group label named by parameter (deprecated form)', tags: ['labels'] },
  }, async ({ request, reply, input }) => {
    await deleteGroupLabel(request, input.id, exactlyOne(input.label_id, input.name));
    return reply.code(204).send();
  });

  for (const [verb, subscribe] of [['subscribe', true], ['unsubscribe', false]] as const) {
    route(app, {
      method: 'POST', url: `/groups/:id/labels/:label_id/${verb}`, auth: 'required', params: defineParams({ ...groupId, ...labelRef }),
      schema: {
        summary: `${subscribe ? 'Subscribe to' : 'Unsubscribe from'} a group label`, tags: ['labels'],
        response: { 201: GroupLabelSchema, 304: Type.Null() },
      },
    }, async ({ request, reply, input, caller }) => {
      const ctx = await loadGroup(request, input.id);
      const label = await groupLabel(request, ctx, input.label_id, { projectIds: [], groupIds: ctx.lineage });
      const now = (await subscribedLabelIds(db, caller.user.id, [label.id])).has(label.id);
      if (now === subscribe) return reply.code(304).send();
      await setLabelSubscription(db, caller.user.id, label.id, null, subscribe);
      return reply.code(201).send((await presentGroupLabels(request, [label], false))[0]);
    });
  }
};

/** Grape's `exactly_one_of :label_id, :name`: both is mutually_exclusive's 400, neither this one. */
function exactlyOne(labelId: number | undefined, name: string | undefined): string {
  if (labelId !== undefined && labelId !== null) return String(labelId);
  if (name !== undefined && name !== null) return name;
  throw invalidParams(['label_id, name are missing, exactly one parameter must be provided']);
}

export default labels;
