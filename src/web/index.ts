/** The server-rendered pages (CONTRACT §5) outside /oauth: sign-in and /profile/applications. */
import type { FastifyPluginAsync } from 'fastify';
import signIn from './routes/sign-in.ts';
import applications from './routes/applications.ts';

const web: FastifyPluginAsync = async (app) => {
  await app.register(signIn);
  await app.register(applications);
};

export default web;
