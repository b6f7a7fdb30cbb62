/**
 * The OAuth 2.0 / OpenID Connect provider (spec, OAuth 2.0 provider; CONTRACT §5): loads or
 * creates the signing keys at boot, then serves /oauth/* and the discovery document. Every route
 * says `config.web`: these endpoints authenticate clients and tokens themselves, in OAuth's terms.
 */
import type { FastifyPluginAsync } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import { loadSigningKeys } from './keys.ts';
import type { OAuthServer } from './server.ts';
import authorize from './routes/authorize.ts';
import token from './routes/token.ts';
import tokenInfo from './routes/token-info.ts';
import revoke from './routes/revoke.ts';
import userinfo from './routes/userinfo.ts';
import discovery from './routes/discovery.ts';
import { pageBroadcasts } from '../web/page-broadcasts.ts';

const oauth: FastifyPluginAsync = async (app) => {
  // Cookies (the session, for /oauth/authorize) are parsed only in this scope and the pages'.
  await app.register(fastifyCookie);
  const ctx = app.kiln;
  const server: OAuthServer = { ctx, keys: await loadSigningKeys(ctx.config.dataDir), issuer: ctx.config.externalUrl };
  // The consent page and its error pages show the broadcast messages, as every page does; the
  // JSON endpoints beside it do not look them up.
  await app.register(async (pages) => {
    pageBroadcasts(pages);
    await pages.register(authorize, { server });
  });
  for (const plugin of [token, tokenInfo, revoke, userinfo, discovery]) await app.register(plugin, { server });
};

export default oauth;
