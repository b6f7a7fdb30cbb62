/** DeployToken and DeployTokenWithToken (the Service's API::Entities): the secret only in the answer to its creation. */
import { Type, type Static } from 'typebox';
import type { DeployTokenRow } from '../../db/tables/deploy-tokens.ts';
import { deployTokenExpired, deployTokenScopes, deployTokenUsername } from '../../domain/deploy-tokens/deploy-tokens.ts';

export const DeployTokenSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  username: Type.String(),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  scopes: Type.Array(Type.String()),
  revoked: Type.Boolean(),
  expired: Type.Boolean(),
}, { title: 'DeployToken' });

export const DeployTokenWithTokenSchema = Type.Object({
  ...DeployTokenSchema.properties,
  token: Type.String(),
}, { title: 'DeployTokenWithToken' });

export type DeployToken = Static<typeof DeployTokenSchema>;

export function presentDeployToken(row: DeployTokenRow): DeployToken {
  return {
    id: row.id, name: row.name, username: deployTokenUsername(row), expires_at: row.expires_at,
    scopes: deployTokenScopes(row), revoked: row.revoked === 1, expired: deployTokenExpired(row),
  };
}

export function presentDeployTokenWithToken(row: DeployTokenRow, token: string): Static<typeof DeployTokenWithTokenSchema> {
  return { ...presentDeployToken(row), token };
}
