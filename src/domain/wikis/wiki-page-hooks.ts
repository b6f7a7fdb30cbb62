/**
 * Wiki page events for project hooks (the Service's WikiPages::BaseService#execute_hooks with
 * Gitlab::DataBuilder::WikiPage): after a page is created, changed or deleted, the hooks that hear
 * wiki_page_events get the acting user, the project, the wiki (Wiki#hook_attrs) and the page
 * (WikiPage#hook_attrs with its web URL and the action). Built only when a hook will hear it.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { integrationHearsAny } from '../integrations/integrations.queries.ts';
import { executeEventIntegrations } from '../integrations/push-integrations.ts';
import { enqueueHookEvent } from '../web-hooks/hook-events.ts';
import { projectHookAttrs, userHookAttrs, type HookUrls } from '../web-hooks/payloads.ts';
import { hooksHearing } from '../web-hooks/web-hooks.queries.ts';
import type { WikiPage } from './wiki-pages.ts';

export type WikiPageAction = 'create' | 'update' | 'delete';

/** The commit message each action writes (wiki-pages.ts), which the payload carries as the page's message. */
function messageOf(username: string, action: WikiPageAction, title: string): string {
  return `${username} ${action === 'create' ? 'created' : action === 'update' ? 'updated' : 'deleted'} page: ${title}`;
}

export async function queueWikiPageHook(
  db: Kysely<DB>, urls: HookUrls, project: ProjectRow, page: WikiPage, userId: number, action: WikiPageAction,
): Promise<void> {
  const hooks = (await hooksHearing(db, project.id, 'wiki_page_events')).length > 0;
  // The project's integrations hear wiki pages too (WikiPages::BaseService#execute_hooks).
  const integrations = await integrationHearsAny(db, project.id, ['wiki_page_events']);
  if (!hooks && !integrations) return;
  const projectAttrs = await projectHookAttrs(db, urls, project);
  const user = await userHookAttrs(db, urls, userId);
  const wikiUrl = `${projectAttrs.web_url}/-/wikis`;
  const data = {
    object_kind: 'wiki_page',
    user,
    project: projectAttrs,
    wiki: {
      web_url: `${wikiUrl}/home`,
      git_ssh_url: projectAttrs.git_ssh_url.replace(/\.git$/, '.wiki.git'),
      git_http_url: projectAttrs.git_http_url.replace(/\.git$/, '.wiki.git'),
      path_with_namespace: `${projectAttrs.path_with_namespace}.wiki`,
      default_branch: projectAttrs.default_branch,
    },
    object_attributes: {
      title: page.title, content: page.content?.toString('utf8') ?? '', format: page.format,
      message: messageOf(user?.username ?? '', action, page.title), slug: page.slug,
      url: `${wikiUrl}/${page.slug}`, action,
    },
  };
  if (hooks) await enqueueHookEvent(db, project, 'wiki_page_events', data);
  if (integrations) await executeEventIntegrations(db, project.id, 'wiki_page_events', data);
}
