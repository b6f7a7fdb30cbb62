/**
 * Who may call a group's SCIM API: the bearer of the group's SCIM token, and nobody else (no
 * personal, OAuth or other group's token). The token is compared with the group's digest in
 * constant time; a missing group, a group without a token and a wrong token all answer the same
 * 401, so the API tells nobody without the token which groups exist.
 */
import type { FastifyRequest } from 'fastify';
import { isStorableText } from '../db/constraints.ts';
import { findNamespaceByIdOrPath, namespacePaths } from '../domain/namespaces/namespaces.queries.ts';
import type { ScimGroup } from '../domain/scim/provisioning.ts';
import { findSamlProvider } from '../domain/scim/scim.queries.ts';
import { scimTokenMatches } from '../domain/scim/scim-token.ts';
import { scimNotFound, scimUnauthorized } from './errors.ts';
import { scimBaseUrl } from './resources.ts';

export interface ScimContext extends ScimGroup {
  baseUrl: string;
}

/** Longer than any token kiln issues; longer values are refused before hashing. */
const MAX_TOKEN_LENGTH = 256;
const MAX_GROUP_PATH_LENGTH = 255 * 20;

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return match && match[1].length <= MAX_TOKEN_LENGTH ? match[1] : null;
}

export async function authenticateScim(request: FastifyRequest): Promise<ScimContext> {
  const { db, config } = request.server.kiln;
  const token = bearerToken(request);
  if (!token) throw scimUnauthorized();
  const groupPath = (request.params as { group_path?: string }).group_path ?? '';
  const usable = groupPath.length > 0 && groupPath.length <= MAX_GROUP_PATH_LENGTH && isStorableText(groupPath);
  const found = usable ? await findNamespaceByIdOrPath(db, groupPath) : undefined;
  const group = found?.kind === 'group' ? found : undefined;
  if (!(await scimTokenMatches(db, group?.id ?? null, token)) || !group) throw scimUnauthorized();
  const provider = await findSamlProvider(db, group.id);
  if (!provider?.enabled) throw scimNotFound(`Group ${groupPath} does not have SAML SSO configured`);
  const fullPath = (await namespacePaths(db, [group])).get(group.id)!.fullPath;
  return { id: group.id, name: group.name, provider, baseUrl: scimBaseUrl(config.externalUrl, fullPath) };
}
