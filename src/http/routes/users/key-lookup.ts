/**
 * SSH keys looked up across users (lib/api/keys.rb, reference §2.1): by id, and by fingerprint in
 * either form ("SHA256:<base64>" or MD5 "aa:bb:…"), answering SSHKeyWithUser. Administrators only.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { KeyRow } from '../../../db/tables/keys.ts';
import { findKeyByFingerprint, findKeyById } from '../../../domain/keys/keys.queries.ts';
import { parseFingerprintQuery } from '../../../domain/keys/ssh-public-key.ts';
import { findUserProfile, identitiesOf } from '../../../domain/users/users.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { ApiError, notFound, recordNotFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { presentSshKey, SSHKeyWithUserSchema } from '../../entities/ssh-key.ts';
import { DeployKeyWithUserSchema, presentDeployKeysProjectLink } from '../../entities/deploy-key.ts';
import { linksOfKeys } from '../../../domain/deploy-keys/deploy-keys.queries.ts';
import { presentUserPublic } from '../../entities/user.ts';
import { route } from '../../route.ts';

const params = {
  show: defineParams({ id: P.string({ description: 'key id' }) }),
  find: defineParams({ fingerprint: P.string({ description: 'SHA256:<base64> or MD5 aa:bb:… fingerprint' }) }),
};

const tags = ['keys'];
/** SSHKeyWithUser, and for a deploy key DeployKeyWithUser (its deploy_keys_projects besides). */
const KeyWithUser = Type.Object({
  ...DeployKeyWithUserSchema.properties,
  deploy_keys_projects: Type.Optional(DeployKeyWithUserSchema.properties.deploy_keys_projects),
}, { title: 'SSHKeyWithUser' });

const keys: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function presentWithUser(key: KeyRow, viewerId: number, withProjects: boolean) {
    const [owner, identities] = await Promise.all([findUserProfile(db, key.user_id, viewerId), identitiesOf(db, [key.user_id])]);
    if (!owner) throw recordNotFound();
    const user = presentUserPublic(owner, {
      followers: owner.followers, following: owner.following, isFollowed: owner.is_followed > 0, identities,
    }, { externalUrl: config.externalUrl, canReadProfile: true });
    const entity = { ...presentSshKey(key, owner, config.externalUrl), user };
    // Found by fingerprint, a deploy key's answer adds the projects it is enabled on (DeployKeyWithUser).
    if (!withProjects || key.type !== 'DeployKey') return entity;
    return { ...entity, deploy_keys_projects: (await linksOfKeys(db, [key.id])).map(presentDeployKeysProjectLink) };
  }

  route(app, {
    method: 'GET', url: '/keys/:id', auth: 'required', params: params.show,
    schema: { summary: 'An SSH key with its owner, by id (administrators)', tags, response: { 200: SSHKeyWithUserSchema } },
  }, async ({ request, input }) => {
    const admin = authenticatedAsAdmin(request);
    const { id } = input;
    // Key.find: a missing or non-numeric id is ActiveRecord's RecordNotFound (reference §6.2).
    const key = /^\d{1,10}$/.test(id) ? await findKeyById(db, Number(id)) : undefined;
    if (!key) throw recordNotFound();
    return presentWithUser(key, admin.id, false);
  });

  route(app, {
    method: 'GET', url: '/keys', auth: 'required', params: params.find,
    schema: { summary: 'An SSH key with its owner, by fingerprint (administrators)', tags, response: { 200: KeyWithUser } },
  }, async ({ request, input }) => {
    const admin = authenticatedAsAdmin(request);
    const { fingerprint } = input;
    const query = parseFingerprintQuery(fingerprint);
    if (!query) throw new ApiError(400, { message: 'Failed to return the key' });
    const key = await findKeyByFingerprint(db, query);
    if (!key) throw notFound('Key');
    return presentWithUser(key, admin.id, true);
  });
};

export default keys;
