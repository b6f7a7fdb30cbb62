/**
 * Projects and what belongs to one outside its repository and CI: members (of groups too), snippets, project and group access tokens.
 *
 * Every path of the area and its guard: `npm run routes -- projects`.
 */
import type { FastifyInstance } from 'fastify';
import { registerFiles } from '../area.ts';
import projects from './projects.ts';
import members from './members.ts';
import snippets from './snippets.ts';
import snippetReads from './snippet-reads.ts';
import projectSnippets from './project-snippets.ts';
import accessTokens from './access-tokens.ts';
import topics from './topics.ts';
import deployKeys from './deploy-keys.ts';
import deployTokens from './deploy-tokens.ts';
import releases from './releases.ts';
import releaseLinks from './release-links.ts';
import projectTemplates from './project-templates.ts';
import badges from './badges.ts';
import wikis from './wikis.ts';
import uploads from './uploads.ts';
import hooks from './hooks.ts';
import projectStatistics from './statistics.ts';
import forks from './forks.ts';
import groupLinks from './group-links.ts';
import integrations from './integrations.ts';
import importExport from './import-export.ts';

export default async function projectsArea(api: FastifyInstance): Promise<void> {
  await registerFiles(api, 'projects', {
    // /projects, /projects/:id, archive, unarchive, star, unstar, starrers, /projects/user/:user_id,
    // /users/:user_id/(projects|starred_projects)
    'projects': projects,
    'members': members,                // /projects/:id/members, /groups/:id/members
    'snippets': snippets,              // /snippets[/:id[/raw]]
    'snippet-reads': snippetReads,     // /snippets/public, /snippets/:id/files/:ref/:file_path/raw
    'project-snippets': projectSnippets, // /projects/:id/snippets[/:snippet_id[/raw|/files/:ref/:file_path/raw|/user_agent_detail]]
    'access-tokens': accessTokens,     // /projects/:id/access_tokens, /groups/:id/access_tokens
    'topics': topics,                  // /topics[/:id], /topics/merge
    'deploy-keys': deployKeys,         // /deploy_keys, /projects/:id/deploy_keys[/:key_id[/enable]]
    'deploy-tokens': deployTokens,     // /deploy_tokens, /(projects|groups)/:id/deploy_tokens[/:token_id]
    'releases': releases,              // /projects/:id/releases[/:tag_name|/permalink/latest[/*]], /groups/:id/releases
    'release-links': releaseLinks,     // /projects/:id/releases/:tag_name/assets/links[/:link_id]
    'project-templates': projectTemplates, // /projects/:id/templates/:type[/:name]
    'badges': badges,                  // /(projects|groups)/:id/badges[/render|/:badge_id]
    'wikis': wikis,                    // /projects/:id/wikis[/:slug|/attachments]
    'uploads': uploads,                // /projects/:id/uploads
    'hooks': hooks,                    // /projects/:id/hooks[/:hook_id[/test/:trigger]]
    'statistics': projectStatistics,   // /projects/:id/statistics, POST /projects/:id/housekeeping
    'forks': forks,                    // /projects/:id/fork[/:forked_from_id]
    'group-links': groupLinks,         // /projects/:id/share[/:group_id], /projects/:id/groups
    'integrations': integrations,      // /projects/:id/(integrations|services)[/:slug]
    // /projects/:id/export[/download], /projects/:id/import, /projects/(import|remote-import),
    // /groups/:id/export[/download], /groups/import
    'import-export': importExport,
  });
}
