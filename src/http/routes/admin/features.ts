/**
 * kiln's feature flags for administrators (the Service's lib/api/features.rb): list the flags
 * that were set, set a flag's gates (on, off, a percentage of time or of actors, or on/off for
 * users, groups, namespaces and projects), unset it, and list the definitions of the flags kiln
 * reads (domain/features/definitions.ts).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.ts';
import { FEATURE_DEFINITIONS, featureDefinition } from '../../../domain/features/definitions.ts';
import { changeFeature, listFeatures, removeFeature, type FeatureView } from '../../../domain/features/features.ts';
import { findUserByUsername } from '../../../domain/users/users.queries.ts';
import { findNamespaceByIdOrPath } from '../../../domain/namespaces/namespaces.queries.ts';
import { findProjectByIdOrPath } from '../../../domain/projects/projects.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { badRequestMessage } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { route } from '../../route.ts';

const tags = ['features'];

const DefinitionSchema = Type.Object({
  name: Type.String(),
  introduced_by_url: Type.Union([Type.String(), Type.Null()]),
  rollout_issue_url: Type.Union([Type.String(), Type.Null()]),
  milestone: Type.Union([Type.String(), Type.Null()]), log_state_changes: Type.Union([Type.Boolean(), Type.Null()]), type: Type.String(),
  group: Type.Union([Type.String(), Type.Null()]), default_enabled: Type.Boolean(),
}, { title: 'FeatureDefinition' });
const FeatureSchema = Type.Object({
  name: Type.String(),
  state: Type.String(),
  gates: Type.Array(Type.Object({ key: Type.String(), value: Type.Union([Type.Boolean(), Type.Number(), Type.Array(Type.String())]) })),
  definition: Type.Union([DefinitionSchema, Type.Null()]),
}, { title: 'Feature' });

const TARGETS = ['user', 'group', 'namespace', 'project', 'feature_group'] as const;
const setParams = defineParams({
  name: P.name({ description: 'the feature flag' }),
  value: P.name({ description: 'true or false, or a percentage (0–100)' }),
  key: P.optional(P.oneOf(['percentage_of_actors', 'percentage_of_time'] as const, { description: 'which percentage (default of time)' })),
  feature_group: P.optional(P.name({ description: 'a feature group (kiln registers none)' })),
  user: P.optional(P.string({ maxLength: 4096, description: 'usernames, comma-separated' })),
  group: P.optional(P.string({ maxLength: 4096, description: 'group full paths, comma-separated' })),
  namespace: P.optional(P.string({ maxLength: 4096, description: 'namespace full paths, comma-separated' })),
  project: P.optional(P.string({ maxLength: 4096, description: 'project full paths, comma-separated' })),
  force: P.optional(P.boolean({ description: 'accepted for compatibility; kiln checks nothing it could skip' })),
}, { mutuallyExclusive: TARGETS.map((t) => ['key', t]) });
const nameParams = defineParams({ name: P.name({ description: 'the feature flag' }) });

function present(f: FeatureView) {
  return { ...f, definition: featureDefinition(f.name) ?? null };
}

/** Feature::Target: each named actor as its flipper id; `<name> is not found!` for one missing. */
async function actorsOf(db: Kysely<DB>, input: Partial<Record<(typeof TARGETS)[number], string>>): Promise<string[]> {
  const out: string[] = [];
  const names = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const missing = (name: string) => badRequestMessage(`${name} is not found!`);
  for (const name of names(input.feature_group)) throw missing(name);
  for (const name of names(input.user)) {
    const user = await findUserByUsername(db, name);
    if (!user) throw missing(name);
    out.push(`User:${user.id}`);
  }
  for (const [param, kind] of [['group', 'Group'], ['namespace', 'Namespace']] as const) {
    for (const name of names(input[param])) {
      const ns = await findNamespaceByIdOrPath(db, name);
      if (!ns || (param === 'group' && ns.kind !== 'group')) throw missing(name);
      out.push(`${kind}:${ns.id}`);
    }
  }
  for (const name of names(input.project)) {
    const project = await findProjectByIdOrPath(db, name);
    if (!project) throw missing(name);
    out.push(`Project:${project.id}`);
  }
  return out;
}

const features: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;
  // `before { authenticated_as_admin! }`.
  const adminOnly = async (request: FastifyRequest) => {
    authenticatedAsAdmin(request);
  };

  route(app, {
    method: 'GET', url: '/features', auth: 'required', preValidation: adminOnly,
    schema: { summary: 'The feature flags that were set (administrators)', tags, response: { 200: Type.Array(FeatureSchema) } },
  }, async () => (await listFeatures(db)).map(present));

  route(app, {
    method: 'GET', url: '/features/definitions', auth: 'required', preValidation: adminOnly,
    schema: {
      summary: 'The definitions of the feature flags kiln reads (administrators)', tags,
      response: { 200: Type.Array(DefinitionSchema) },
    },
  }, async () => FEATURE_DEFINITIONS);

  route(app, {
    method: 'POST', url: '/features/:name', auth: 'required', preValidation: adminOnly, params: setParams,
    schema: { summary: "Set a feature flag's gates (administrators)", tags, response: { 201: FeatureSchema } },
  }, async ({ reply, input }) => {
    const actors = await actorsOf(db, input);
    let view: FeatureView;
    if (input.value === 'true' || input.value === 'false' || input.value === '0') {
      view = await changeFeature(db, input.name, { value: input.value === 'true', actors });
    } else {
      // A percentage (Flipper's typecast: an integer, or a float when it has a point).
      const n = Number(input.value);
      if (!/^\d+(\.\d+)?$/.test(input.value) || n > 100) {
        throw badRequestMessage(`value must be a positive number less than or equal to 100, but was ${input.value}`);
      }
      view = await changeFeature(db, input.name, { value: n, key: input.key ?? 'percentage_of_time' });
    }
    reply.code(201);
    return present(view);
  });

  route(app, {
    method: 'DELETE', url: '/features/:name', auth: 'required', preValidation: adminOnly, params: nameParams,
    schema: { summary: 'Unset a feature flag: back to its default (administrators)', tags, response: { 204: Type.Null() } },
  }, async ({ reply, input }) => {
    await removeFeature(db, input.name);
    return reply.code(204).send();
  });
};

export default features;
