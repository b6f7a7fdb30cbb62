/**
 * Notification settings (the Service's lib/api/notification_settings.rb): the caller's global
 * level and notification email, and their level for a project or group they may read (404
 * otherwise); `custom` with its events switched one by one. Reads never write: a setting never
 * set answers its default (participating globally, global for a source).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type, type TProperties } from 'typebox';
import {
  changeNotificationSetting, EMAIL_EVENTS, notificationSettingFor, type EmailEvent, type NotificationSettingView,
  type NotificationSource,
} from '../../../domain/notification-settings/notification-settings.ts';
import { badRequestMessage, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { loadGroup, loadProject } from '../../loaders/containers.ts';
import { route } from '../../route.ts';

const tags = ['notification_settings'];

const eventParams = Object.fromEntries(EMAIL_EVENTS.map((e) => [e, P.optional(P.boolean({ description: `${e} notifications (custom level)` }))])) as
  Record<EmailEvent, ReturnType<typeof P.optional<ReturnType<typeof P.boolean>>>>;
const eventSchema = Type.Object(Object.fromEntries(EMAIL_EVENTS.map((e) => [e, Type.Boolean()])) as TProperties);

const NotificationSettingSchema = Type.Object({
  level: Type.String(),
  events: Type.Optional(eventSchema),
}, { title: 'NotificationSetting' });
const GlobalNotificationSettingSchema = Type.Object({
  level: Type.String(),
  events: Type.Optional(eventSchema),
  notification_email: Type.Union([Type.String(), Type.Null()]),
}, { title: 'GlobalNotificationSetting' });

// The level is a free string (an unknown one is the enum's 400 in the Service's words).
const globalParams = defineParams({
  level: P.optional(P.name({ description: 'disabled, participating, watch, global, mention or custom' })),
  notification_email: P.optional(P.name({ description: 'one of your verified email addresses' })),
  ...eventParams,
});
const sourceReadParams = defineParams({ id: P.string({ description: 'project or group id or URL-encoded full path' }) });
const sourceParams = defineParams({
  id: P.string({ description: 'project or group id or URL-encoded full path' }),
  level: P.optional(P.name({ description: 'disabled, participating, watch, global, mention or custom' })),
  ...eventParams,
});

/** NotificationSetting entity: the events only for the custom level. */
function present(s: NotificationSettingView) {
  return { level: s.level, ...(s.level === 'custom' ? { events: s.events } : {}) };
}

function eventsOf(input: Partial<Record<EmailEvent, boolean | undefined>>): Partial<Record<EmailEvent, boolean>> {
  return Object.fromEntries(EMAIL_EVENTS.filter((e) => input[e] !== undefined).map((e) => [e, input[e]!]));
}

const notificationSettings: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  route(app, {
    method: 'GET', url: '/notification_settings', auth: 'required',
    schema: { summary: 'Your global notification level and email', tags, response: { 200: GlobalNotificationSettingSchema } },
  }, async ({ caller }) => {
    const setting = await notificationSettingFor(db, caller.user.id, { kind: 'global' });
    // notification_email_or_default: the primary email when none is set.
    return { ...present(setting), notification_email: setting.notificationEmail ?? caller.user.email };
  });

  route(app, {
    method: 'PUT', url: '/notification_settings', auth: 'required', params: globalParams,
    schema: { summary: 'Change your global notification level and email', tags, response: { 200: GlobalNotificationSettingSchema } },
  }, async ({ input, caller }) => {
    const result = await changeNotificationSetting(db, caller.user.id, { kind: 'global' }, {
      level: input.level, notificationEmail: input.notification_email, events: eventsOf(input),
    });
    if (!result.ok) throw result.error === 'level' ? badRequestMessage(result.message) : validationFailed(result.errors);
    return { ...present(result.setting), notification_email: result.setting.notificationEmail ?? caller.user.email };
  });

  for (const kind of ['project', 'group'] as const) {
    const url = `/${kind}s/:id/notification_settings`;
    const sourceOf = async (request: Parameters<typeof loadProject>[0], id: string): Promise<NotificationSource> => kind === 'project'
      ? { kind, id: (await loadProject(request, id)).project.id }
      : { kind, id: (await loadGroup(request, id)).group.id };

    route(app, {
      method: 'GET', url, auth: 'required', params: sourceReadParams,
      schema: { summary: `Your notification level for a ${kind}`, tags, response: { 200: NotificationSettingSchema } },
    }, async ({ request, input, caller }) => present(await notificationSettingFor(db, caller.user.id, await sourceOf(request, input.id))));

    route(app, {
      method: 'PUT', url, auth: 'required', params: sourceParams,
      schema: { summary: `Change your notification level for a ${kind}`, tags, response: { 200: NotificationSettingSchema } },
    }, async ({ request, input, caller }) => {
      const source = await sourceOf(request, input.id);
      const result = await changeNotificationSetting(db, caller.user.id, source, { level: input.level, events: eventsOf(input) });
      if (!result.ok) throw result.error === 'level' ? badRequestMessage(result.message) : validationFailed(result.errors);
      return present(result.setting);
    });
  }
};

export default notificationSettings;
