/**
 * Carries out one integration job (push-integrations.ts queued it): the integration is read
 * again (gone or inactive: nothing to do), its secrets opened, and its kind acts on the push
 * (or, for the chat kinds, on the issue or pipeline event).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { Sealer } from '../ci-variables/encryption.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { allProtectedBranches } from '../protected-refs/protected-refs.queries.ts';
import { projectRepository } from '../repositories/project-repository.ts';
import { currentSettings } from '../settings/settings.ts';
import { USER_AGENT } from '../web-hooks/run-delivery.ts';
import { executeAsana, type AsanaPush } from './asana.ts';
import { executeDiscord, executeGoogleChat, executeMicrosoftTeams, executeSlackFormat, type ChatDeps } from './chat.ts';
import { executeEmailsOnPush, type MailPush } from './emails-on-push.ts';
import { findIntegrationById } from './integrations.queries.ts';
import { readSettings } from './manage-integrations.ts';
import { executePipelinesEmail } from './pipelines-email.ts';
import type { IntegrationJob } from './push-integrations.ts';

export interface IntegrationDeps {
  db: Kysely<DB>;
  sealer: () => Promise<Sealer>;
  storages: StorageShard[];
  externalUrl: string;
  smtpUrl: string | null;
  smtpFrom: string;
  asanaApiUrl: string;
}

export async function runIntegrationJob(deps: IntegrationDeps, job: IntegrationJob): Promise<void> {
  const row = await findIntegrationById(deps.db, job.integrationId);
  if (!row || row.active !== 1) return;
  const project = await findProjectById(deps.db, row.project_id);
  if (!project) return;
  const settings = readSettings(await deps.sealer(), row);
  const data = job.data as Record<string, unknown> & { project: { namespace: string; name: string } };
  if (row.type === 'emails-on-push') {
    const gitDir = projectRepository(deps.storages, project).gitDir;
    const patterns = (await allProtectedBranches(deps.db, project.id)).map((b) => b.name);
    await executeEmailsOnPush(
      { smtpUrl: deps.smtpUrl, from: deps.smtpFrom, externalUrl: deps.externalUrl }, gitDir, settings,
      data as unknown as MailPush, patterns,
    );
  } else if (row.type === 'pipelines-email') {
    const protectedPatterns = (await allProtectedBranches(deps.db, project.id)).map((b) => b.name);
    await executePipelinesEmail(
      { db: deps.db, smtpUrl: deps.smtpUrl, from: deps.smtpFrom, externalUrl: deps.externalUrl, protectedPatterns }, settings, data,
    );
  } else if (['slack', 'mattermost', 'discord', 'microsoft-teams', 'hangouts-chat'].includes(row.type)) {
    const allowLocal = (await currentSettings(deps.db)).allow_local_requests_from_web_hooks_and_services;
    const attrs = data.project as { namespace: string; name: string; web_url: string; default_branch: string | null };
    const protectedPatterns = (await allProtectedBranches(deps.db, project.id)).map((b) => b.name);
    const chat: ChatDeps = {
      allowLocal, userAgent: USER_AGENT, projectName: `${attrs.namespace} / ${attrs.name}`, projectUrl: attrs.web_url,
      defaultBranch: attrs.default_branch, protectedPatterns,
    };
    if (row.type === 'discord') await executeDiscord(chat, settings, data);
    else if (row.type === 'hangouts-chat') await executeGoogleChat(chat, settings, data);
    else if (row.type === 'microsoft-teams') await executeMicrosoftTeams(chat, settings, data);
    else await executeSlackFormat(chat, settings, data);
  } else if (row.type === 'asana') {
    const allowLocal = (await currentSettings(deps.db)).allow_local_requests_from_web_hooks_and_services;
    // Project#full_name: "Namespace / Project".
    const push = { ...data, project_full_name: `${data.project.namespace} / ${data.project.name}` } as unknown as AsanaPush;
    await executeAsana({ apiUrl: deps.asanaApiUrl, allowLocal }, settings, push);
  }
}
