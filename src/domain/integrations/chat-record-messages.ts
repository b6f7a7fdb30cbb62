/**
 * The chat messages of merge requests, comments, wiki pages and deployments (the Service's
 * Integrations::ChatMessage::MergeMessage, NoteMessage, WikiPageMessage and DeploymentMessage),
 * in the same three forms as chat-messages.ts: Slack text and attachments, the Markdown text and
 * attachments the Markdown-speaking chats take, and Microsoft Teams' activity.
 */
import { link, plain, slackFormat, stripMarkup, userCombinedName, type ChatMessage } from './chat-messages.ts';

type Data = Record<string, any>;

/** BaseMessage#attachment_color. */
const ATTACHMENT_COLOR = '#334455';
/** BaseMessage::RELATIVE_LINK_REGEX: an uploaded image's relative Markdown link. */
const RELATIVE_UPLOAD = /!\[[^\]]*\]\((\/uploads\/[^)]*)\)/g;

/** BaseMessage#format: uploads' relative links made absolute, then Slack's link syntax. */
function format(text: unknown, projectUrl: string): string {
  return slackFormat(String(text ?? '').replace(RELATIVE_UPLOAD, (_m, path: string) => `${projectUrl}${path}`));
}

function firstLine(text: unknown): string {
  return String(text ?? '').split('\n')[0].replace(/\r$/, '');
}

function projectLink(data: Data): string {
  return link(data.project_name, String(data.project?.web_url ?? data.project_url));
}

function avatar(data: Data): string | null {
  return data.user?.avatar_url ?? data.user_avatar ?? null;
}

/** MergeMessage#state_or_action_text: approvals say so, everything else the state. */
function stateOrAction(attrs: Data): string {
  switch (attrs.action) {
    case 'approved':
    case 'unapproved': return String(attrs.action);
    case 'approval': return 'added their approval to';
    case 'unapproval': return 'removed their approval from';
    default: return String(attrs.state);
  }
}

/** MergeMessage: "<user> <state> merge request !iid *title* in <project>", no attachments. */
export function mergeMessage(data: Data): ChatMessage {
  const attrs = data.object_attributes as Data;
  const projectUrl = String(data.project?.web_url ?? data.project_url);
  const title = `*${stripMarkup(firstLine(attrs.title))}*`;
  const mrLink = link(`!${attrs.iid} ${stripMarkup(title)}`, `${projectUrl}/-/merge_requests/${attrs.iid}`);
  const user = stripMarkup(userCombinedName(data));
  const text = stateOrAction(attrs);
  return plain(`${user} ${text} merge request ${mrLink} in ${projectLink(data)}`, {
    title: `Merge request ${text} by ${user}`, subtitle: `in ${projectLink(data)}`, text: mrLink, image: avatar(data),
  }, []);
}

/** NoteMessage's target and title by the kind of record commented on. */
function noteTarget(data: Data, attrs: Data): [string, string] {
  switch (attrs.noteable_type) {
    case 'Commit': return [`commit ${String(data.commit?.id ?? '').slice(0, 8)}`, String(data.commit?.message ?? '')];
    case 'Issue': return [`issue #${data.issue?.iid}`, String(data.issue?.title ?? '')];
    case 'MergeRequest': return [`merge request !${data.merge_request?.iid}`, String(data.merge_request?.title ?? '')];
    default: return [`snippet $${data.snippet?.id}`, String(data.snippet?.title ?? '')];
  }
}

/** NoteMessage: "<user> commented on <target> in <project>: *<title's first line>*", the comment attached. */
export function noteMessage(data: Data): ChatMessage {
  const attrs = data.object_attributes as Data;
  const projectUrl = String(data.project?.web_url ?? data.project_url);
  const [target, title] = noteTarget(data, attrs);
  const user = stripMarkup(userCombinedName(data));
  const commented = link(`commented on ${target}`, String(attrs.url));
  const shown = firstLine(title);
  return plain(`${user} ${commented} in ${projectLink(data)}: *${shown}*`, {
    title: `${user} ${commented}`, subtitle: `in ${projectLink(data)}`, text: shown, image: avatar(data),
  }, [{ text: format(attrs.note, projectUrl), color: ATTACHMENT_COLOR }], String(attrs.note ?? ''));
}

/** WikiPageMessage: "<user> created|edited [wiki page](url) in <project>: *<title>*", the commit message attached. */
export function wikiPageMessage(data: Data): ChatMessage {
  const attrs = data.object_attributes as Data;
  const projectUrl = String(data.project?.web_url ?? data.project_url);
  // Only creations and edits have a verb (WikiPageMessage#initialize); a deletion reads without one.
  const action = attrs.action === 'create' ? 'created' : attrs.action === 'update' ? 'edited' : '';
  const user = stripMarkup(userCombinedName(data));
  const pageLink = `[wiki page](${attrs.url})`;
  const projectPart = `[${data.project_name}](${projectUrl})`;
  return plain(`${user} ${action} ${pageLink} in ${projectPart}: *${attrs.title}*`, {
    title: `${user} ${action} ${pageLink}`, subtitle: `in ${projectLink(data)}`, text: String(attrs.title), image: avatar(data),
  }, [{ text: format(attrs.message, projectUrl), color: ATTACHMENT_COLOR }], String(attrs.message ?? ''));
}

/**
 * DeploymentMessage: "Starting deploy to <environment>" or "Deploy to <environment>
 * succeeded|failed|canceled", with the project, job, deployer and commit attached in the
 * status's colour (Slack's messenger formats the attachment's links).
 */
export function deploymentMessage(data: Data): ChatMessage {
  const status = String(data.status);
  const message = status === 'running'
    ? `Starting deploy to ${data.environment}`
    : `Deploy to ${data.environment} ${status === 'success' ? 'succeeded' : status}`;
  const color = status === 'success' ? 'good' : status === 'canceled' ? 'warning' : status === 'failed' ? 'danger' : ATTACHMENT_COLOR;
  // Ruby interpolates nil as nothing: a deployment made through the API has no job ("[#]()").
  const s = (value: unknown) => (value === null || value === undefined ? '' : String(value));
  const text = `${projectLink(data)} with job ${link(`#${s(data.deployable_id)}`, s(data.deployable_url))} by `
    + `${link(userCombinedName(data), s(data.user_url))}\n${link(data.short_sha, s(data.commit_url))}: ${s(data.commit_title)}`;
  return plain(message, { title: '', subtitle: '', text: '', image: null }, [{ text: slackFormat(text), color }], text);
}
