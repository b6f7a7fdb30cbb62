/**
 * The emails-on-push integration (the Service's app/models/integrations/emails_on_push.rb,
 * EmailsOnPushWorker and Emails::RepositoryPush): a mail per push to its recipients, for a branch
 * it notifies (branches_to_be_notified: all, the default branch, protected branches, or both;
 * tag pushes always), listing the pushed commits, the compare link and, unless disable_diffs, the
 * diff. It goes from the committer's address when send_from_committer_email is set and that
 * address is of the instance's own domain, otherwise from kiln's (KILN_SMTP_FROM). Without
 * KILN_SMTP_URL kiln sends no mail.
 */
import nodemailer from 'nodemailer';
import { runGit } from '../repositories/git-command.ts';
import { branchFilterMatches } from '../web-hooks/hook-events.ts';

const ZERO = /^0+$/;
/** A diff longer than this is cut short (the Service's mail leaves out diffs over its limits too). */
const DIFF_LIMIT = 100_000;

export interface MailDeps {
  smtpUrl: string | null;
  from: string;
  externalUrl: string;
}

interface PushCommit {
  id: string;
  title: string;
  message: string;
  url: string;
  timestamp: string;
  author: { name: string; email: string };
}

export interface MailPush {
  ref: string;
  before: string;
  after: string;
  user_name: string | null;
  project: { path_with_namespace: string; web_url: string; default_branch: string | null };
  commits: PushCommit[];
  total_commits_count: number;
}

export interface EmailsOnPushSettings {
  recipients?: unknown;
  disable_diffs?: unknown;
  send_from_committer_email?: unknown;
  branches_to_be_notified?: unknown;
}

/** The recipients list split on white space and commas (EmailsOnPush#execute). */
export function recipientList(text: unknown): string[] {
  return typeof text === 'string' ? text.split(/[\s,]+/).filter((r) => r !== '') : [];
}

/** Whether a push to `branch` is mailed (EmailsOnPush#notify_for_ref? with its branch choices). */
export function notifiesBranch(choice: unknown, branch: string, defaultBranch: string | null, protectedPatterns: string[]): boolean {
  const isDefault = branch === defaultBranch;
  const isProtected = protectedPatterns.some((p) => branchFilterMatches(p, branch));
  switch (choice) {
    case 'default': return isDefault;
    case 'protected': return isProtected;
    case 'default_and_protected': return isDefault || isProtected;
    default: return true;
  }
}

function refParts(ref: string): { type: 'branch' | 'tag'; name: string } {
  return ref.startsWith('refs/tags/') ? { type: 'tag', name: ref.slice('refs/tags/'.length) } : { type: 'branch', name: ref.replace(/^refs\/heads\//, '') };
}

/** Emails::RepositoryPush#subject. */
export function pushSubject(push: MailPush): string {
  const { type, name } = refParts(push.ref);
  const created = ZERO.test(push.before);
  const deleted = ZERO.test(push.after);
  let subject = `[Git][${push.project.path_with_namespace}]`;
  const isPush = type === 'branch' && !created && !deleted;
  if (isPush) subject += `[${name}]`;
  subject += ' ';
  if (isPush && push.commits.length > 0) {
    subject += push.commits.length > 1 ? `${push.commits.length} commits: ${push.commits[0].title}` : push.commits[0].title;
  } else {
    subject += `${deleted ? 'Deleted' : created ? 'Pushed new' : 'Pushed to'} ${type} ${name}`;
  }
  return subject;
}

async function diffText(gitDir: string, push: MailPush): Promise<string> {
  if (ZERO.test(push.after)) return '';
  const range = ZERO.test(push.before) ? [`${push.after}^{commit}`] : [push.before, push.after];
  const { stdout, exitCode } = await runGit(
    ZERO.test(push.before) ? ['show', '--format=', '--no-color', ...range, '--'] : ['diff', '--no-color', ...range, '--'],
    { gitDir, okExitCodes: [1, 128] },
  );
  if (exitCode !== 0) return '';
  return stdout.length > DIFF_LIMIT ? `${stdout.slice(0, DIFF_LIMIT)}\n[diff cut short]\n` : stdout;
}

/** The mail's plain text (Emails::RepositoryPush's text template: commits, compare link, changes). */
export async function pushBody(gitDir: string, push: MailPush, withDiffs: boolean): Promise<string> {
  const { type, name } = refParts(push.ref);
  const action = ZERO.test(push.after) ? 'deleted' : ZERO.test(push.before) ? 'pushed new' : 'pushed to';
  const lines = [`${push.user_name ?? 'Someone'} ${action} ${type} ${name} at ${push.project.path_with_namespace}`, ''];
  if (push.commits.length > 0) {
    lines.push('Commits:', '');
    for (const c of push.commits) {
      lines.push(`${c.id} by ${c.author.name} at ${c.timestamp}`, '', ...c.message.split('\n').map((l) => `    ${l}`), '', c.url, '');
    }
  }
  if (!ZERO.test(push.before) && !ZERO.test(push.after)) {
    lines.push(`Compare: ${push.project.web_url}/-/compare/${push.before.slice(0, 8)}...${push.after.slice(0, 8)}`, '');
  }
  if (withDiffs) {
    const diff = await diffText(gitDir, push);
    if (diff) lines.push('Changes:', '', diff);
  }
  return `${lines.join('\n')}\n`;
}

/** Sends the mail of one push; returns whether one went out. */
export async function executeEmailsOnPush(
  deps: MailDeps, gitDir: string, settings: EmailsOnPushSettings, push: MailPush, protectedPatterns: string[],
): Promise<boolean> {
  if (!deps.smtpUrl) return false;
  const recipients = recipientList(settings.recipients);
  if (recipients.length === 0) return false;
  const { type, name } = refParts(push.ref);
  const choice = settings.branches_to_be_notified ?? 'all';
  if (type === 'branch' && !notifiesBranch(choice, name, push.project.default_branch, protectedPatterns)) return false;
  const committer = push.commits.at(-1)?.author;
  const ownDomain = new URL(deps.externalUrl).hostname.toLowerCase();
  const fromCommitter = settings.send_from_committer_email === true && committer
    && committer.email.toLowerCase().endsWith(`@${ownDomain}`);
  const from = fromCommitter ? { name: committer.name, address: committer.email } : deps.from;
  const transport = nodemailer.createTransport(deps.smtpUrl);
  try {
    await transport.sendMail({
      from, to: recipients, subject: pushSubject(push),
      text: await pushBody(gitDir, push, settings.disable_diffs !== true),
    });
  } finally {
    transport.close();
  }
  return true;
}
