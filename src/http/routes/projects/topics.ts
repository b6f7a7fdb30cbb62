/**
 * Project topics (lib/api/topics.rb of the Service): anyone lists and reads them; administrators
 * create, change, delete and merge them. A topic's projects follow its renames and merges
 * (domain/topics/topics.queries.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import {
  deleteTopic, findTopic, insertTopic, mergeTopics, topicsQuery, updateTopic, type TopicWithCount,
} from '../../../domain/topics/topics.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { badRequestMessage, notFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { route } from '../../route.ts';
import { checkUnmodifiedSince } from '../../unmodified-since.ts';

const TopicSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  title: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  total_projects_count: Type.Integer(),
  avatar_url: Type.Null(),
}, { title: 'Topic' });

/** Projects::Topic's validations: name and title present and at most 255 characters, description at most 1024. */
const TITLE_MAX = 255;
const DESCRIPTION_MAX = 1024;
const text = (max: number) => P.string({ maxLength: max });

const listParams = defineParams({
  search: P.optional(P.name()), without_projects: P.optional(P.boolean()), ...paginationParams,
});
const idParams = defineParams({ id: P.integer() });
const createParams = defineParams({
  name: text(TITLE_MAX), title: text(TITLE_MAX), description: P.optional(text(DESCRIPTION_MAX)),
});
const updateParams = defineParams({
  id: P.integer(), name: P.optional(text(TITLE_MAX)), title: P.optional(text(TITLE_MAX)), description: P.optional(text(DESCRIPTION_MAX)),
});
const mergeParams = defineParams({ source_topic_id: P.integer(), target_topic_id: P.integer() });

function presentTopic(t: TopicWithCount) {
  const count = Number(t.total_projects_count);
  return { id: t.id, name: t.name, title: t.title, description: t.description, total_projects_count: count, avatar_url: null };
}

/** The validation errors of a name and title (blank), as render_validation_error! words them. */
function blankErrors(values: { name?: string; title?: string }): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const [field, value] of Object.entries(values)) if (value !== undefined && value.trim() === '') errors[field] = ["can't be blank"];
  return errors;
}

const topics: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  async function load(id: number) {
    const topic = await findTopic(db, id);
    if (!topic) throw notFound('Topic');
    return topic;
  }

  route(app, {
    method: 'GET', url: '/topics', auth: 'optional', params: listParams,
    schema: { summary: 'Project topics, the most used first', tags: ['topics'], response: { 200: Type.Array(TopicSchema) } },
  }, async ({ request, reply, input }) => {
    const rows = await paginate(db, request, reply, topicsQuery(db, {
      search: input.search || undefined, withoutProjects: input.without_projects === true,
    }));
    return rows.map(presentTopic);
  });

  route(app, {
    method: 'GET', url: '/topics/:id', auth: 'optional', params: idParams,
    schema: { summary: 'A project topic', tags: ['topics'], response: { 200: TopicSchema } },
  }, async ({ input }) => presentTopic(await load(input.id)));

  route(app, {
    method: 'POST', url: '/topics', auth: 'required', params: createParams,
    schema: { summary: 'Create a project topic (administrators)', tags: ['topics'], response: { 201: TopicSchema } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const errors = blankErrors({ name: input.name, title: input.title });
    if (Object.keys(errors).length > 0) throw validationFailed(errors);
    const id = await insertTopic(db, { name: input.name.trim(), title: input.title.trim(), description: input.description ?? null });
    if (id === null) throw validationFailed({ name: ['has already been taken'] });
    reply.code(201);
    return presentTopic(await load(id));
  });

  route(app, {
    method: 'PUT', url: '/topics/:id', auth: 'required', params: updateParams,
    schema: { summary: 'Change a project topic (administrators)', tags: ['topics'], response: { 200: TopicSchema } },
  }, async ({ request, input }) => {
    authenticatedAsAdmin(request);
    const topic = await load(input.id);
    const errors = blankErrors({ name: input.name, title: input.title });
    if (Object.keys(errors).length > 0) throw validationFailed(errors);
    const changed = await updateTopic(db, topic, {
      ...(input.name !== undefined ? { name: input.name.trim() } : {}),
      ...(input.title !== undefined ? { title: input.title.trim() } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
    });
    if (!changed) throw validationFailed({ name: ['has already been taken'] });
    return presentTopic(await load(topic.id));
  });

  route(app, {
    method: 'DELETE', url: '/topics/:id', auth: 'required', params: idParams,
    schema: { summary: 'Delete a project topic (administrators)', tags: ['topics'], response: { 204: Type.Null() } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const topic = await load(input.id);
    checkUnmodifiedSince(request, topic.updated_at);
    await deleteTopic(db, topic);
    return reply.code(204).send();
  });

  route(app, {
    method: 'POST', url: '/topics/merge', auth: 'required', params: mergeParams,
    schema: { summary: "Merge a topic into another: its projects carry the target (administrators)", tags: ['topics'],
      response: { 201: TopicSchema } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const source = await load(input.source_topic_id);
    const target = await load(input.target_topic_id);
    // Topics::MergeService#validate_parameters!.
    if (source.id === target.id) throw badRequestMessage('The source topic and the target topic are identical.');
    await mergeTopics(db, source, target);
    reply.code(201);
    return presentTopic(await load(target.id));
  });
};

export default topics;
