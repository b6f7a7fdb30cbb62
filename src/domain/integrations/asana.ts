/**
 * The asana integration (the Service's app/models/integrations/asana.rb): for a push to a branch
 * it inspects (restrict_to_branch, empty for all), every commit message mentioning an Asana task
 * — `#<task id>` or a https://app.asana.com/<n>/<project>/<task> URL, optionally after a fix or
 * close keyword — gets a comment (a story) on that task saying who pushed it where, and the
 * keyword completes the task. A task the API refuses is skipped, as the Service logs and goes on.
 */
import http from 'node:http';
import https from 'node:https';
import { guardedLookup } from '../web-hooks/delivery.ts';
import { checkDeliveryUrl } from '../web-hooks/url-policy.ts';

/** The Service's issue_finder: (keyword)? non-word characters, then a task URL or #id. */
const TASK_MENTION = /(fix\w*|clos[ei]\w*)?\W*(?:https:\/\/app\.asana\.com\/\d+\/\w+\/(\w+)|#(\w+))/gi;
const TIMEOUT_MS = 10_000;

export interface AsanaDeps {
  apiUrl: string;
  allowLocal: boolean;
}

export interface AsanaPush {
  ref: string;
  user_name: string | null;
  project_full_name: string;
  commits: { message: string; url: string }[];
}

/** Each task a message mentions and whether a keyword closes it. */
export function taskMentions(message: string): { taskId: string; close: boolean }[] {
  return [...message.matchAll(TASK_MENTION)].map((m) => ({ taskId: m[3] ?? m[2], close: m[1] !== undefined }));
}

function call(deps: AsanaDeps, apiKey: string, method: string, path: string, body?: unknown): Promise<number> {
  const url = checkDeliveryUrl(`${deps.apiUrl}${path}`, deps.allowLocal);
  const text = body === undefined ? undefined : JSON.stringify(body);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method, agent: false, lookup: guardedLookup(deps.allowLocal), signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: {
        Authorization: `Bearer ${apiKey.replace(/[\r\n]/g, '')}`, Accept: 'application/json',
        ...(text === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) }),
      },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** Comments on (and completes) the tasks the push's commits mention; returns how many tasks were reached. */
export async function executeAsana(
  deps: AsanaDeps, settings: { api_key?: unknown; restrict_to_branch?: unknown }, push: AsanaPush,
): Promise<number> {
  if (typeof settings.api_key !== 'string' || settings.api_key === '' || !push.ref.startsWith('refs/heads/')) return 0;
  const branch = push.ref.slice('refs/heads/'.length);
  // The Service checks `restrict_to_branch.index(branch)`: the branch must appear in the list's text.
  const restriction = typeof settings.restrict_to_branch === 'string' ? settings.restrict_to_branch : '';
  if (restriction !== '' && !restriction.includes(branch)) return 0;
  let reached = 0;
  for (const commit of push.commits) {
    const pushMessage = `${push.user_name ?? ''} pushed to branch ${branch} of ${push.project_full_name} ( ${commit.url} ):`;
    for (const { taskId, close } of taskMentions(commit.message)) {
      const task = `/tasks/${encodeURIComponent(taskId)}`;
      try {
        if (!ok(await call(deps, settings.api_key, 'GET', task))) continue;
        if (!ok(await call(deps, settings.api_key, 'POST', `${task}/stories`, { data: { text: `${pushMessage} ${commit.message}` } }))) continue;
        if (close) await call(deps, settings.api_key, 'PUT', task, { data: { completed: true } });
        reached++;
      } catch {
        // An unreachable or refused task is skipped (the Service's rescue … next).
      }
    }
  }
  return reached;
}

function ok(status: number): boolean {
  return status >= 200 && status < 300;
}
