/**
 * Setting up, changing and turning off a project's integration (the Service's API::Integrations
 * PUT and DELETE). A PUT keeps the settings it does not name and makes the integration active;
 * a DELETE makes it inactive and clears its settings (each field back to nil). Secret settings
 * are sealed; `readSettings` opens them for the integration's own work only.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { IntegrationRow } from '../../db/tables/integrations.ts';
import type { Sealer } from '../ci-variables/encryption.ts';
import type { EventFlag, IntegrationKind } from './catalog.ts';
import { currentSettings } from '../settings/settings.ts';
import { urlProblem } from '../web-hooks/url-policy.ts';
import { upsertIntegration, type IntegrationWrite } from './integrations.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;
export type SettingValue = string | boolean;

export interface IntegrationInput {
  settings: Record<string, SettingValue | null | undefined>;
  events: Partial<Record<EventFlag, boolean | null>>;
}

function parseObject(text: string | null): Record<string, SettingValue> {
  if (!text) return {};
  const value: unknown = JSON.parse(text);
  return value && typeof value === 'object' ? value as Record<string, SettingValue> : {};
}

/** The non-secret settings of a row (what the API shows as `properties`). */
export function publicSettings(row: IntegrationRow | undefined): Record<string, SettingValue> {
  return row ? parseObject(row.properties) : {};
}

/** Every setting of a row, secrets opened (for carrying the integration out; never for an answer). */
export function readSettings(sealer: Sealer, row: IntegrationRow): Record<string, SettingValue> {
  return { ...parseObject(row.properties), ...parseObject(row.secrets_sealed === null ? null : sealer.open(row.secrets_sealed)) };
}

/**
 * Why the settings of a save are refused, or null: a chat integration's webhook must be a valid
 * http(s) URL that is not a local address unless the instance allows local requests from hooks
 * and integrations (BaseChatNotification's `validates :webhook, public_url: true`, checked with the
 * webhooks' own address rules, url-policy.ts). The Service answers a failed save with a bare
 * 400 Bad Request (lib/api/integrations.rb), so the reason is for the log only.
 */
export async function settingsProblem(db: Db, kind: IntegrationKind, input: IntegrationInput): Promise<string | null> {
  if (!kind.settings.some((s) => s.name === 'webhook')) return null;
  const webhook = input.settings.webhook;
  if (typeof webhook !== 'string') return null;
  const allowLocal = (await currentSettings(db)).allow_local_requests_from_web_hooks_and_services;
  const problem = urlProblem(webhook.trim(), allowLocal);
  if (!problem) return null;
  return problem === 'is not a valid URL' ? 'Webhook must be a valid URL' : `Webhook is blocked: ${problem}`;
}

export async function saveIntegration(
  db: Db, sealer: Sealer, projectId: number, kind: IntegrationKind, existing: IntegrationRow | undefined, input: IntegrationInput,
): Promise<IntegrationRow> {
  const properties = publicSettings(existing);
  const secrets = existing ? readSettings(sealer, existing) : {};
  for (const name of Object.keys(properties)) delete secrets[name];
  for (const setting of kind.settings) {
    const value = input.settings[setting.name];
    if (value === undefined) continue;
    // An empty value (Grape's nil) clears the setting.
    if (value === null) {
      delete properties[setting.name];
      delete secrets[setting.name];
      continue;
    }
    if (setting.secret) secrets[setting.name] = value;
    else properties[setting.name] = value;
  }
  const values: IntegrationWrite = {
    active: 1, properties: JSON.stringify(properties),
    secrets_sealed: Object.keys(secrets).length > 0 ? sealer.seal(JSON.stringify(secrets)) : null,
  };
  for (const event of kind.events) {
    const on = input.events[event];
    if (on !== undefined && on !== null) values[event] = on ? 1 : 0;
  }
  return upsertIntegration(db, projectId, kind.slug, values);
}

/** DELETE: inactive, settings cleared (the Service sets each field to its column default, nil). */
export async function deactivateIntegration(db: Db, projectId: number, kind: IntegrationKind): Promise<IntegrationRow> {
  return upsertIntegration(db, projectId, kind.slug, { active: 0, properties: '{}', secrets_sealed: null });
}
