/**
 * OpenAPI 3.1 generated from the route schemas (DESIGN, Stack), served at /api/v4/openapi.json,
 * with the interactive reference at /api/v4/docs.
 */
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

export default fp(async (app) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'kiln: Service REST API v4', version: app.kiln.version.version },
      servers: [{ url: app.kiln.config.externalUrl }],
      components: {
        securitySchemes: {
          privateToken: { type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN' },
          bearer: { type: 'http', scheme: 'bearer' },
          jobToken: { type: 'apiKey', in: 'header', name: 'JOB-TOKEN' },
        },
      },
      security: [{ privateToken: [] }, { bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/api/v4/docs', uiConfig: { docExpansion: 'list' } });
  app.get('/api/v4/openapi.json', { config: { web: true }, schema: { hide: true } }, async () => app.swagger());
}, { name: 'openapi' });
