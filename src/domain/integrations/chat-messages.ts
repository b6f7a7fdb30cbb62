/**
 * The chat integrations' messages (the Service's app/models/integrations/chat_message/*.rb):
 * for each event a chat integration hears, the text (`pretext`), the `fallback` and the Slack
 * attachments, written with Markdown links that `slackFormat` turns into Slack's <url|label>.
 * User text is stripped of link markup first (SlackMarkdownSanitizer.sanitize) so a title can
 * neither hijack nor add a link.
 */
const ZERO_SHA = /^0+$/;

export interface ChatMessage {
  pretext: string;
  fallback: string;
  attachments: Record<string, unknown>[];
  /** The message as the Markdown-speaking chats take it (BaseMessage with `markdown: true`). */
  markdown: { text: string; attachments: string };
  /** The activity card Microsoft Teams shows (BaseMessage#activity). */
  activity: { title: string; subtitle: string; text: string; image: string | null };
}

type Data = Record<string, any>;

/** SlackMarkdownSanitizer.sanitize: the characters of link markup removed. */
export function stripMarkup(text: unknown): string {
  return String(text ?? '').replace(/[<>[\]|]/g, '');
}

export function link(text: unknown, url: string): string {
  return `[${stripMarkup(text)}](${url})`;
}

/** Slack::Messenger::Util::LinkFormatter: Markdown and HTML links as Slack's <url|label>. */
export function slackFormat(text: string): string {
  return text
    .replace(/\[([^[\]]*?)\]\(((?:https?:\/\/|mailto:)[^()]*?)\)/g, '<$2|$1>')
    .replace(/<a\s+href=["']([^"']+)["'][^>]*>(.*?)<\/a>/gi, '<$1|$2>');
}

/** BaseMessage#user_combined_name: "Full Name (username)", or the one name the data has. */
export function userCombinedName(data: Data): string {
  const fullName = data.user?.name ?? data.user_full_name;
  const userName = data.user?.username ?? data.user_name;
  return fullName ? `${fullName} (${userName ?? ''})` : String(userName ?? '');
}

export function plain(
  message: string, activity: ChatMessage['activity'], attachments: Record<string, unknown>[], markdownAttachments = '',
): ChatMessage {
  return {
    pretext: slackFormat(message), fallback: slackFormat(message), attachments,
    markdown: { text: message, attachments: markdownAttachments }, activity,
  };
}

/** PushMessage: new branch/tag, removed branch/tag, or a push with its commits as one attachment. */
export function pushMessage(data: Data): ChatMessage {
  const ref = String(data.ref ?? '');
  const refType = ref.startsWith('refs/tags/') ? 'tag' : 'branch';
  const name = ref.replace(/^refs\/(heads|tags)\//, '');
  const projectUrl = String(data.project_url);
  const refUrl = refType === 'tag' ? `${projectUrl}/-/tags/${name}` : `${projectUrl}/-/commits/${name}`;
  const user = stripMarkup(userCombinedName(data));
  const projectLink = link(data.project_name, projectUrl);
  const created = ZERO_SHA.test(String(data.before ?? ''));
  const removed = ZERO_SHA.test(String(data.after ?? ''));
  const compare = `[Compare changes](${projectUrl}/-/compare/${data.before}...${data.after})`;
  const activity = (action: string, ref: string) => ({
    title: `${user} ${action} ${refType} ${ref}`, subtitle: `in ${projectLink}`, text: compare, image: data.user_avatar ?? null,
  });
  if (created) return plain(`${user} pushed new ${refType} ${link(name, refUrl)} to ${projectLink}`, activity('pushed new', link(name, refUrl)), []);
  if (removed) return plain(`${user} removed ${refType} ${stripMarkup(name)} from ${projectLink}`, activity('removed', name), []);
  const commits = (data.commits as Data[] ?? []).map((c) =>
    `[${String(c.id).slice(0, 8)}](${c.url}): ${stripMarkup(c.title)} - ${stripMarkup(c.author?.name)}`).join('\n\n');
  return plain(
    `${user} pushed to ${refType} ${link(name, refUrl)} of ${projectLink} (${compare})`,
    activity('pushed to', link(name, refUrl)),
    [{ text: slackFormat(commits), color: '#334455' }],
    commits,
  );
}

/** IssueMessage: "[project] Issue #iid title opened by …", the description attached when opened. */
export function issueMessage(data: Data): ChatMessage {
  const attrs = data.object_attributes as Data;
  const projectPart = data.project_name ? `[${link(data.project_name, String(data.project_url))}] ` : '';
  const title = `#${attrs.iid} ${stripMarkup(attrs.title)}`;
  const type = attrs.type ?? 'Issue';
  const message = `${projectPart}${type} ${link(title, String(attrs.url))} ${attrs.state} by ${stripMarkup(userCombinedName(data))}`;
  const attachments = attrs.action === 'open'
    ? [{ title, title_link: attrs.url, text: slackFormat(String(attrs.description ?? '')), color: '#C95823' }]
    : [];
  const activity = {
    title: `${type} ${attrs.state} by ${stripMarkup(userCombinedName(data))}`,
    subtitle: data.project_name ? `in ${link(data.project_name, String(data.project_url))}` : '',
    text: link(title, String(attrs.url)), image: data.user?.avatar_url ?? null,
  };
  return plain(message, activity, attachments, attrs.action === 'open' ? String(attrs.description ?? '') : '');
}

/** BaseMessage#pretty_duration: MM:SS, or HH:MM:SS from an hour on. */
export function prettyDuration(seconds: number): string {
  const two = (n: number) => String(n).padStart(2, '0');
  const h = Math.floor(seconds / 3600) % 24;
  const m = Math.floor(seconds / 60) % 60;
  const s = seconds % 60;
  return seconds < 3600 ? `${two(m)}:${two(s)}` : `${two(h)}:${two(m)}:${two(s)}`;
}

/** A hook time ("2026-01-02 03:04:05 UTC") as Unix seconds, Slack's `ts`. */
function finishedAt(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const ms = Date.parse(text.replace(' UTC', 'Z').replace(' ', 'T'));
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

/** PipelineMessage: no text, one attachment with the ref, the commit and what failed. */
export function pipelineMessage(data: Data): ChatMessage {
  const attrs = data.object_attributes as Data;
  const projectUrl = String(data.project?.web_url);
  const refType = attrs.tag ? 'tag' : 'branch';
  const refUrl = refType === 'tag' ? `${projectUrl}/-/tags/${attrs.ref}` : `${projectUrl}/-/commits/${attrs.ref}`;
  const builds = (data.builds as Data[] | undefined) ?? [];
  // Jobs that failed with no successful retry of the same name (actually_failed_jobs).
  const succeeded = new Set(builds.filter((b) => b.status === 'success').map((b) => b.name));
  const seen = new Set<string>();
  const failed = builds
    .filter((b) => b.status === 'failed' && !succeeded.has(b.name) && !seen.has(b.name) && seen.add(b.name))
    .reverse();
  const stages = [...new Set(failed.map((j) => String(j.stage)))];
  const pipelineUrl = failed.length > 0 ? `${projectUrl}/-/pipelines/${attrs.id}/failures` : `${projectUrl}/-/pipelines/${attrs.id}`;
  const status = String(attrs.status);
  const warned = attrs.detailed_status === 'passed with warnings';
  const humanized = status === 'success' ? (warned ? 'has passed with warnings' : 'has passed')
    : status === 'failed' ? 'has failed' : status;
  const color = status === 'success' ? (warned ? 'warning' : 'good') : 'danger';
  const duration = prettyDuration(Math.trunc(Number(attrs.duration ?? 0)));
  const user = data.user ? stripMarkup(userCombinedName(data)) : 'API';
  const refLink = link(attrs.ref, refUrl);
  const pipelineLink = link(`#${attrs.id}`, pipelineUrl);
  const message = `${link(data.project?.name, projectUrl)}: Pipeline ${pipelineLink} of ${refType} ${refLink} by ${user} ${humanized} in ${duration}`;
  const words = (list: string[]) => list.join(', ');
  const fields: Record<string, unknown>[] = [
    { title: refType === 'tag' ? 'Tag' : 'Branch', value: slackFormat(refLink), short: true },
    { title: 'Commit', value: slackFormat(link(data.commit?.title, String(data.commit?.url))), short: true },
  ];
  if (stages.length > 0) {
    const value = slackFormat(words(stages.map((s) => link(s, pipelineUrl))));
    fields.push({ title: stages.length === 1 ? 'Failed stage' : 'Failed stages', value, short: true });
  }
  if (failed.length > 0) {
    const shown = failed.slice(0, 10).map((j) => link(j.name, `${projectUrl}/-/jobs/${j.id}`));
    if (failed.length > 10) shown.push(`and [${failed.length - 10} more](${projectUrl}/-/pipelines/${attrs.id}/failures)`);
    fields.push({ title: failed.length === 1 ? 'Failed job' : 'Failed jobs', value: slackFormat(words(shown)), short: true });
  }
  return {
    pretext: '',
    fallback: slackFormat(message),
    markdown: { text: '', attachments: message },
    activity: {
      title: `Pipeline ${pipelineLink} of ${refType} ${refLink} by ${user} ${humanized}`,
      subtitle: `in ${link(data.project?.name, projectUrl)}`, text: `in ${duration}`, image: data.user?.avatar_url ?? '',
    },
    attachments: [{
      fallback: slackFormat(message), color, author_name: user, author_icon: data.user?.avatar_url ?? null,
      title: `Pipeline #${attrs.id} ${humanized} in ${duration}`, title_link: pipelineUrl, fields,
      footer: data.project?.name, ts: finishedAt(attrs.finished_at),
    }],
  };
}
