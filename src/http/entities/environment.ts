/**
 * The Service's Entities::EnvironmentBasic, Environment, Deployment (lib/api/entities, 15.2):
 * EnvironmentBasic is id, name, slug, external_url, created_at, updated_at; Environment adds tier,
 * project (BasicProjectDetails), last_deployment (the single read only) and state. A deployment is
 * id, iid, ref, sha, created_at, updated_at, user (UserBasic), environment (EnvironmentBasic),
 * deployable (the Job entity, or null for one made through the API) and status.
 */
import { Type, type Static } from 'typebox';
import type { DeploymentRow, EnvironmentRow } from '../../db/tables/environments.ts';
import type { UserRow } from '../../db/types.ts';
import { UserBasicSchema, presentUserBasic } from './user.ts';
import { BasicProjectDetailsSchema, type BasicProjectDetails } from './project.ts';
import { JobSchema, type Job } from './job.ts';

export const EnvironmentBasicSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  external_url: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { title: 'EnvironmentBasic' });

export const DeploymentSchema = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  ref: Type.String(),
  sha: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  user: Type.Union([UserBasicSchema, Type.Null()]),
  environment: EnvironmentBasicSchema,
  deployable: Type.Union([JobSchema, Type.Null()]),
  status: Type.String(),
}, { title: 'Deployment' });

export const EnvironmentSchema = Type.Object({
  ...EnvironmentBasicSchema.properties,
  tier: Type.String(),
  project: BasicProjectDetailsSchema,
  last_deployment: Type.Optional(Type.Union([DeploymentSchema, Type.Null()])),
  state: Type.String(),
}, { title: 'Environment' });

export type EnvironmentBasic = Static<typeof EnvironmentBasicSchema>;
export type Deployment = Static<typeof DeploymentSchema>;
export type Environment = Static<typeof EnvironmentSchema>;

export function presentEnvironmentBasic(e: EnvironmentRow): EnvironmentBasic {
  return { id: e.id, name: e.name, slug: e.slug, external_url: e.external_url, created_at: e.created_at, updated_at: e.updated_at };
}

/** `lastDeployment`: undefined leaves the field out (lists), null or a deployment shows it (the single read). */
export function presentEnvironment(
  e: EnvironmentRow, project: BasicProjectDetails, lastDeployment?: Deployment | null,
): Environment {
  return {
    ...presentEnvironmentBasic(e),
    tier: e.tier,
    project,
    ...(lastDeployment !== undefined ? { last_deployment: lastDeployment } : {}),
    state: e.state,
  };
}

export function presentDeployment(
  d: DeploymentRow, environment: EnvironmentRow, user: UserRow | undefined, deployable: Job | null, externalUrl: string,
): Deployment {
  return {
    id: d.id, iid: d.iid, ref: d.ref, sha: d.sha, created_at: d.created_at, updated_at: d.updated_at,
    user: user ? presentUserBasic(user, {}, { externalUrl, canReadProfile: false }) : null,
    environment: presentEnvironmentBasic(environment),
    deployable,
    status: d.status,
  };
}
