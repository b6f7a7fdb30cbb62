/**
 * The pipelines-email integration (the Service's app/models/integrations/pipelines_email.rb with
 * PipelineNotificationWorker, NotificationService#pipeline_finished and Emails::Pipelines, 15.2):
 * a finished pipeline of a branch it notifies is mailed to each recipient on its own, a failed one
 * always, a successful one only when notify_only_broken_pipelines is off (on until set otherwise).
 * Branches follow branches_to_be_notified (the default branch until set otherwise; an integration
 * saved with the older notify_only_default_branch alone reads it as "default" or "all"); tag
 * pipelines are judged as their ref like the Service's NotificationBranchSelection does.
 * The subject is "<project> | <Successful|Failed> pipeline for <ref> | <short sha>" and the body the
 * text part of notify/pipeline_success_email or pipeline_failed_email in the mailer layout.
 */
import nodemailer from 'nodemailer';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { CommitData } from '../pipelines/git-source.ts';
import { findPipeline } from '../pipelines/pipelines.queries.ts';
import { notifiesBranch } from './emails-on-push.ts';
import { userByCommitEmail } from './integrations.queries.ts';

type Data = Record<string, any>;
type Settings = Record<string, unknown>;

export interface PipelineMailDeps {
  db: Kysely<DB>;
  smtpUrl: string | null;
  from: string;
  externalUrl: string;
  protectedPatterns: string[];
}

/** PipelinesEmail#retrieve_recipients: split on commas, line breaks and spaces. */
export function pipelineRecipients(text: unknown): string[] {
  return typeof text === 'string' ? text.split(/[,\r\n ]+/).filter((r) => r !== '') : [];
}

/** The branch choice in force (PipelinesEmail#initialize_properties). */
function branchChoice(settings: Settings): unknown {
  if (settings.branches_to_be_notified !== undefined) return settings.branches_to_be_notified;
  if (settings.notify_only_default_branch === false) return 'all';
  return 'default';
}

/** PipelinesEmail#should_pipeline_be_notified?: the ref's branch chosen, and failed (or success unless only broken ones). */
export function pipelineMailed(settings: Settings, data: Data, defaultBranch: string | null, protectedPatterns: string[]): boolean {
  const status = data.object_attributes?.status;
  const statusOk = status === 'failed' || (status === 'success' && settings.notify_only_broken_pipelines === false);
  if (!statusOk) return false;
  return notifiesBranch(branchChoice(settings), String(data.object_attributes?.ref ?? ''), defaultBranch, protectedPatterns);
}

/** ActiveSupport's String#truncate(50): 47 characters and "..." when longer. */
function truncate50(text: string): string {
  return text.length > 50 ? `${text.slice(0, 47)}...` : text;
}

/** The pipeline's source ref (a merge request pipeline's source branch). */
function sourceRef(data: Data): string {
  const ref = String(data.object_attributes?.ref ?? '');
  return ref.startsWith('refs/merge-requests/') && data.merge_request ? String(data.merge_request.source_branch) : ref;
}

export function pipelineMailSubject(data: Data): string {
  const status = data.object_attributes.status === 'success' ? 'Successful' : 'Failed';
  return [data.project.name, `${status} pipeline for ${sourceRef(data)}`, String(data.object_attributes.sha).slice(0, 8)].join(' | ');
}

/** The text body of a finished pipeline's mail (the templates' text parts, rendered as ERB does). */
export async function pipelineMailBody(deps: PipelineMailDeps, data: Data, commit: Partial<CommitData>): Promise<string> {
  const attrs = data.object_attributes as Data;
  const web = String(data.project.web_url);
  const userUrl = (username: string) => `${deps.externalUrl}/${username}`;
  const failed = attrs.status !== 'success';
  const lines: string[] = [`Pipeline #${attrs.id} has ${failed ? 'failed' : 'passed'}!`, ''];
  lines.push(`Project: ${data.project.name} ( ${web} )`, `Branch: ${sourceRef(data)} ( ${web}/-/commits/${sourceRef(data)} )`);
  if (data.merge_request) lines.push(`Merge request: !${data.merge_request.iid} ( ${web}/-/merge_requests/${data.merge_request.iid} )`);
  lines.push('', `Commit: ${String(attrs.sha).slice(0, 8)} ( ${web}/-/commit/${attrs.sha} )`);
  lines.push(`Commit Message: ${truncate50(commit.message ?? '')}`);
  const author = await userByCommitEmail(deps.db, commit.author_email ?? '');
  lines.push(author ? `Commit Author: ${author.name} ( ${userUrl(author.username)} )` : `Commit Author: ${commit.author_name ?? ''}`);
  // Commit#different_committer?: the committer is someone else than the author.
  if ((commit.committer_email ?? '') !== '' && commit.committer_email !== commit.author_email) {
    const committer = await userByCommitEmail(deps.db, commit.committer_email ?? '');
    lines.push(committer ? `Committed by: ${committer.name} ( ${userUrl(committer.username)} )` : `Committed by: ${commit.committer_name ?? ''}`);
  }
  const by = data.user
    ? `triggered by ${data.user.name} ( ${userUrl(data.user.username)} )`
    : 'triggered by API';
  const pipelineLine = `Pipeline #${attrs.id} ( ${web}/-/pipelines/${attrs.id} ) ${by}`;
  const builds = (data.builds as Data[] | undefined) ?? [];
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (!failed) {
    const stages = new Set(builds.map((b) => b.stage)).size;
    lines.push('', '', '', pipelineLine, `successfully completed ${plural(builds.length, 'job')} in ${plural(stages, 'stage')}.`);
  } else {
    const failedJobs = builds.filter((b) => b.status === 'failed');
    lines.push('', '', '', '', pipelineLine, '', '', `had ${failedJobs.length} failed ${failedJobs.length === 1 ? 'job' : 'jobs'}.`, '');
    for (const job of failedJobs) lines.push(`Job #${job.id} ( ${web}/-/jobs/${job.id} )`, `Stage: ${job.stage}`, `Name: ${job.name}`);
  }
  // The mailer layout's signature (layouts/mailer.text.erb).
  return `${lines.join('\n')}\n\n-- \nYou're receiving this email because of your account on ${new URL(deps.externalUrl).hostname}.\n`;
}

/** Mails a finished pipeline to the recipients, one mail each; returns how many went out. */
export async function executePipelinesEmail(deps: PipelineMailDeps, settings: Settings, data: Data): Promise<number> {
  if (!deps.smtpUrl || data.object_kind !== 'pipeline') return 0;
  if (!pipelineMailed(settings, data, data.project?.default_branch ?? null, deps.protectedPatterns)) return 0;
  const recipients = pipelineRecipients(settings.recipients);
  if (recipients.length === 0) return 0;
  const pipeline = await findPipeline(deps.db, Number(data.object_attributes.id));
  if (!pipeline) return 0;
  const commit = JSON.parse(pipeline.commit_data) as Partial<CommitData>;
  const subject = pipelineMailSubject(data);
  const text = await pipelineMailBody(deps, data, commit);
  // Emails::Pipelines#add_headers: the project's and the pipeline's headers.
  const headers = {
    'X-GitLab-Project': String(data.project.name), 'X-GitLab-Project-Id': String(pipeline.project_id),
    'X-GitLab-Project-Path': String(data.project.path_with_namespace), 'X-GitLab-Pipeline-Id': String(pipeline.id),
    'X-GitLab-Pipeline-Ref': pipeline.ref, 'X-GitLab-Pipeline-Status': pipeline.status,
  };
  const transport = nodemailer.createTransport(deps.smtpUrl);
  try {
    for (const to of recipients) await transport.sendMail({ from: deps.from, to, subject, text, headers });
  } finally {
    transport.close();
  }
  return recipients.length;
}
