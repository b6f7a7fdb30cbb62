/**
 * The chat integrations (the Service's Integrations::BaseChatNotification and its Slack and
 * Mattermost kinds): which events a chat integration posts about, and the post itself.
 * An issue or merge request update posts nothing (only open, close, reopen, …); a push or a
 * pipeline only for the branches `branches_to_be_notified` names (tags always); a pipeline only
 * when it failed, or succeeded and `notify_only_broken_pipelines` is off. The message goes to
 * the event's channel setting, else `channel` (comma-separated: one post per channel), as
 * Slack::Messenger posts it: a form field `payload` holding the JSON. The webhook URL passes the
 * webhooks' SSRF checks (url-policy.ts, guardedLookup).
 */
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, DELIVERY_TIMEOUT_MS } from '../web-hooks/delivery.ts';
import { BlockedUrlError, checkDeliveryUrl } from '../web-hooks/url-policy.ts';
import { issueMessage, pipelineMessage, pushMessage, type ChatMessage } from './chat-messages.ts';
import { deploymentMessage, mergeMessage, noteMessage, wikiPageMessage } from './chat-record-messages.ts';
import { notifiesBranch } from './emails-on-push.ts';

export interface ChatDeps {
  allowLocal: boolean;
  userAgent: string;
  /** The project's full name ("Namespace / Project") and web URL (BaseChatNotification#custom_data). */
  projectName: string;
  projectUrl: string;
  defaultBranch: string | null;
  protectedPatterns: string[];
}

type Data = Record<string, any>;
type Settings = Record<string, unknown>;

/** BaseChatNotification#notify_for_ref?: tags always, branches as branches_to_be_notified says. */
function notifiesRef(settings: Settings, data: Data, deps: ChatDeps): boolean {
  if (data.object_kind === 'tag_push' || data.object_attributes?.tag === true) return true;
  const branch = typeof data.ref === 'string' ? data.ref.replace(/^refs\/heads\//, '') : String(data.object_attributes?.ref ?? '');
  // A chat integration set up without the choice notifies for the default branch (its initial properties).
  return notifiesBranch(settings.branches_to_be_notified ?? 'default', branch, deps.defaultBranch, deps.protectedPatterns);
}

/** BaseChatNotification#notify_for_pipeline?: failed always, success unless only broken ones, else never. */
function notifiesPipeline(settings: Settings, data: Data): boolean {
  const status = data.object_attributes?.status;
  // notify_only_broken_pipelines is on until set otherwise (the initial properties).
  if (status === 'success') return settings.notify_only_broken_pipelines === false;
  return status === 'failed';
}

/** BaseChatNotification#get_message: the message of an event, or null when it posts nothing. */
export function chatMessage(settings: Settings, data: Data, deps: ChatDeps): ChatMessage | null {
  const full = { ...data, project_url: deps.projectUrl, project_name: deps.projectName };
  switch (data.object_kind) {
    case 'push':
    case 'tag_push':
      return notifiesRef(settings, data, deps) ? pushMessage(full) : null;
    case 'issue':
      return data.object_attributes?.action === 'update' ? null : issueMessage(full);
    case 'merge_request':
      return data.object_attributes?.action === 'update' ? null : mergeMessage(full);
    case 'note':
      return noteMessage(full);
    case 'wiki_page':
      return wikiPageMessage(full);
    case 'deployment':
      return deploymentMessage(full);
    case 'pipeline':
      return notifiesRef(settings, data, deps) && notifiesPipeline(settings, data) ? pipelineMessage(full) : null;
    default:
      return null;
  }
}

const present = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/**
 * The channels of an event: `<event_type>_channel`, else `channel`, split on commas. A
 * confidential issue or note without its own channel goes to the issue or note channel
 * (BaseChatNotification#confidential_issue_channel, #confidential_note_channel).
 */
export function chatChannels(settings: Settings, data: Data): string[] {
  const eventType = String(data.event_type ?? data.object_kind);
  let own = settings[`${eventType}_channel`];
  if (!present(own) && eventType.startsWith('confidential_')) own = settings[`${eventType.slice('confidential_'.length)}_channel`];
  const text = present(own) ? own : settings.channel;
  return typeof text === 'string' ? text.split(',').map((c) => c.trim()).filter((c) => c !== '') : [];
}

function post(url: URL, allowLocal: boolean, userAgent: string, payload: unknown, json = false): Promise<number> {
  // Slack::Messenger posts a form field `payload`; Discordrb posts the JSON itself.
  const body = json ? JSON.stringify(payload) : new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method: 'POST', agent: false, lookup: guardedLookup(allowLocal), signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      headers: {
        'Content-Type': json ? 'application/json' : 'application/x-www-form-urlencoded',
        'Content-Length': String(Buffer.byteLength(body)), 'User-Agent': userAgent,
      },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The webhook URL, or null when it is not set or its address is blocked (then not tried again). */
function webhookUrl(settings: Settings, allowLocal: boolean): URL | null {
  if (typeof settings.webhook !== 'string' || settings.webhook === '') return null;
  try {
    return checkDeliveryUrl(settings.webhook, allowLocal);
  } catch (err) {
    // Gitlab::HTTP raises BlockedUrlError and the Service logs it; no retry would change that.
    if (err instanceof BlockedUrlError) return null;
    throw err;
  }
}

/** Posts one payload; false when the address turned out blocked. A refused post throws, so the job is tried again. */
async function send(url: URL, deps: ChatDeps, payload: unknown, json: boolean): Promise<boolean> {
  let status: number;
  try {
    status = await post(url, deps.allowLocal, deps.userAgent, payload, json);
  } catch (err) {
    if (err instanceof BlockedUrlError) return false;
    throw err;
  }
  if (status < 200 || status >= 400) throw new Error(`chat webhook answered ${status}`);
  return true;
}

/** Posts an event's message to a Slack-format webhook (Slack, Mattermost); returns how many posts were made. */
export async function executeSlackFormat(deps: ChatDeps, settings: Settings, data: Data): Promise<number> {
  const message = chatMessage(settings, data, deps);
  const url = message ? webhookUrl(settings, deps.allowLocal) : null;
  if (!message || !url) return 0;
  const base: Record<string, unknown> = { text: message.pretext, attachments: message.attachments, fallback: message.fallback };
  if (typeof settings.username === 'string' && settings.username !== '') base.username = settings.username;
  const channels = chatChannels(settings, data);
  const payloads = channels.length > 0 ? channels.map((channel) => ({ ...base, channel })) : [base];
  for (const payload of payloads) if (!(await send(url, deps, payload, false))) return 0;
  return payloads.length;
}

/** Discord's "an entry: title\n - author" joins of multi-line commit titles (Integrations::Discord::ATTACHMENT_REGEX). */
const ATTACHMENT_REGEX = /: (.*?)\n - (.*)\n*/g;

/**
 * Posts an event's message to a Discord webhook (Integrations::Discord#notify, Discordrb's
 * webhook client): one embed with the acting user as author and the Markdown message and
 * attachments as description, in the Service's orange.
 */
export async function executeDiscord(deps: ChatDeps, settings: Settings, data: Data, now = new Date()): Promise<boolean> {
  const message = chatMessage(settings, data, deps);
  const url = message ? webhookUrl(settings, deps.allowLocal) : null;
  if (!message || !url) return false;
  const userName = data.object_kind === 'pipeline' ? (data.user?.username ?? 'API') : (data.user?.username ?? data.user_name ?? null);
  const description = `${message.markdown.text}\n${message.markdown.attachments}`.replace(ATTACHMENT_REGEX, ' $1 - $2\n');
  const embed = {
    title: null, description, url: null, timestamp: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    color: 0xfc6d26, footer: null, image: null, thumbnail: null, video: null, provider: null,
    author: { name: userName, url: null, icon_url: data.user?.avatar_url ?? data.user_avatar ?? null }, fields: [],
  };
  return send(url, deps, { content: null, username: null, avatar_url: null, tts: false, embeds: [embed], allowed_mentions: null }, true);
}

/**
 * Posts an event's message to a Google Chat webhook (Integrations::HangoutsChat#notify): one
 * text, the message, then the first attachment's title (as <link|title> when it has a link) and
 * text, each on its own line.
 */
export async function executeGoogleChat(deps: ChatDeps, settings: Settings, data: Data): Promise<boolean> {
  const message = chatMessage(settings, data, deps);
  const url = message ? webhookUrl(settings, deps.allowLocal) : null;
  if (!message || !url) return false;
  let text = message.pretext;
  const first = message.attachments[0];
  if (first) {
    const title = first.title_link ? `<${String(first.title_link)}|${String(first.title)}>` : first.title;
    text = [text, title, first.text].filter((part) => part !== undefined && part !== null).join('\n');
  }
  return send(url, deps, { text }, true);
}

/**
 * Posts an event's message to a Microsoft Teams webhook as a MessageCard (Integrations::
 * MicrosoftTeams#notify, MicrosoftTeams::Notifier): the project's name as title, the Markdown
 * message as summary, the activity section, and the Markdown attachments as a section when any.
 */
export async function executeMicrosoftTeams(deps: ChatDeps, settings: Settings, data: Data): Promise<boolean> {
  const message = chatMessage(settings, data, deps);
  const url = message ? webhookUrl(settings, deps.allowLocal) : null;
  if (!message || !url) return false;
  const { activity } = message;
  const sections: Record<string, unknown>[] = [{
    activityTitle: activity.title, activitySubtitle: activity.subtitle, activityText: activity.text, activityImage: activity.image,
  }];
  if (message.markdown.attachments.trim() !== '') sections.push({ text: message.markdown.attachments });
  // BaseMessage#summary is the Markdown message, the pipeline's too (only its pretext is empty).
  const summary = data.object_kind === 'pipeline' ? message.markdown.attachments : message.markdown.text;
  return send(url, deps, { sections, title: deps.projectName, summary }, true);
}
