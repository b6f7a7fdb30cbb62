/**
 * DeployKey, DeployKeysProject and DeployKeyWithUser (the Service's API::Entities): a deploy key
 * is an SSHKey with its fingerprints; as enabled on a project it carries the link's `can_push`;
 * the administrators' list adds the projects it may push to.
 */
import { Type, type Static } from 'typebox';
import type { KeyRow, DeployKeysProjectRow } from '../../db/tables/keys.ts';
import { presentSshKey, SSHKeySchema, SSHKeyWithUserSchema } from './ssh-key.ts';
import { ProjectIdentitySchema, type ProjectIdentity } from './project.ts';

export const DeployKeySchema = Type.Object({
  ...SSHKeySchema.properties,
  fingerprint: Type.String(),
  fingerprint_sha256: Type.String(),
  projects_with_write_access: Type.Optional(Type.Array(ProjectIdentitySchema)),
}, { title: 'DeployKey' });

export const DeployKeysProjectSchema = Type.Object({
  ...DeployKeySchema.properties,
  can_push: Type.Boolean(),
}, { title: 'DeployKeysProject' });

export const DeployKeysProjectLinkSchema = Type.Object({
  id: Type.Integer(),
  deploy_key_id: Type.Integer(),
  project_id: Type.Integer(),
  can_push: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { title: 'DeployKeysProjectLink' });

export const DeployKeyWithUserSchema = Type.Object({
  ...SSHKeyWithUserSchema.properties,
  deploy_keys_projects: Type.Array(DeployKeysProjectLinkSchema),
}, { title: 'DeployKeyWithUser' });

export type DeployKey = Static<typeof DeployKeySchema>;

/** `creatorName`: the creator's name for the publishable key's comment (the ghost user's once they are gone). */
export function presentDeployKey(row: KeyRow, creatorName: string, externalUrl: string, writable?: ProjectIdentity[]): DeployKey {
  return {
    ...presentSshKey(row, { name: creatorName }, externalUrl),
    fingerprint: row.fingerprint,
    fingerprint_sha256: row.fingerprint_sha256,
    ...(writable ? { projects_with_write_access: writable } : {}),
  };
}

export function presentDeployKeysProject(row: KeyRow & { can_push: number }, creatorName: string, externalUrl: string) {
  return { ...presentDeployKey(row, creatorName, externalUrl), can_push: row.can_push === 1 };
}

export function presentDeployKeysProjectLink(link: DeployKeysProjectRow) {
  return {
    id: link.id, deploy_key_id: link.deploy_key_id, project_id: link.project_id, can_push: link.can_push === 1,
    created_at: link.created_at, updated_at: link.updated_at,
  };
}
