/**
 * Instance administration: settings, OAuth applications, audit events, the SCIM token, broadcast
 * messages, custom attributes of projects and groups, job metrics.
 *
 * Every path of the area and its guard: `npm run routes -- admin`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import applications from './applications.ts';
import applicationSettings from './application-settings.ts';
import auditEvents from './audit-events.ts';
import broadcastMessages from './broadcast-messages.ts';
import customAttributes from './custom-attributes.ts';
import features from './features.ts';
import scimToken from './scim-token.ts';
import systemHooks from './system-hooks.ts';
import sidekiqMetrics from './sidekiq-metrics.ts';
import statistics from './statistics.ts';

export default async function adminArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'admin', {
    'applications': applications,      // /applications
    'application-settings': applicationSettings, // /application/settings
    'audit-events': auditEvents,       // /audit_events, /projects/:id/audit_events, /groups/:id/audit_events
    'broadcast-messages': broadcastMessages, // /broadcast_messages
    'custom-attributes': customAttributes, // /projects/:id/custom_attributes, /groups/:id/custom_attributes
    'features': features,              // /features[/:name], /features/definitions
    'scim-token': scimToken,           // /groups/:id/scim_token
    'system-hooks': systemHooks,       // /hooks[/:id]
    'statistics': statistics,          // /application/statistics
    'sidekiq-metrics': sidekiqMetrics, // /sidekiq/(queue_metrics|process_metrics|job_stats|compound_metrics)
  });
}
