/**
 * The web interface (issue 33, CONTRACT §5): kiln's static files, sign-in, sign-up and
 * /profile/applications (Fastify routes of their own), and the pages declared by the areas of
 * routes/index.ts through router.ts. Every page route of this scope shows the broadcast
 * messages (page-broadcasts.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import assets from './assets.ts';
import signIn from './routes/sign-in.ts';
import signUp from './routes/sign-up.ts';
import applications from './routes/applications.ts';
import { WEB_AREAS } from './routes/index.ts';
import { installWebRoutes } from './router.ts';
import { pageBroadcasts } from './page-broadcasts.ts';

const web: FastifyPluginAsync = async (app) => {
  // Cookies are parsed only for the pages and /oauth: API requests read the session cookie
  // themselves, and only when they carry no token (auth/session-token.ts readCookie).
  await app.register(fastifyCookie);
  const broadcasts = pageBroadcasts(app);
  await app.register(assets);
  await app.register(signIn);
  await app.register(signUp);
  await app.register(applications);
  installWebRoutes(app, WEB_AREAS, broadcasts);
};

export default web;
