/** The server-rendered pages (CONTRACT §5) outside /oauth: sign-in and /profile/applications. */
import type { FastifyPluginAsync } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import signIn from './routes/sign-in.ts';
import applications from './routes/applications.ts';

const web: FastifyPluginAsync = async (app) => {
  // Cookies are parsed only for the pages and /oauth: API requests read the session cookie
  // themselves, and only when they carry no token (auth/session-token.ts readCookie).
  await app.register(fastifyCookie);
  await app.register(signIn);
  await app.register(applications);
};

export default web;
