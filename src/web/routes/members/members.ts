/**
 * Members pages: `/<project>/-/project_members` (the link of the push refusal that tells a user
 * to ask a project's maintainers, git/push-session.ts) and `/groups/<group>/-/group_members`.
 * Each lists who holds access, including through ancestor groups and shared groups, with the role
 * they hold: the same rows as GET /projects/:id/members/all and /groups/:id/members/all
 * (domain/members/inherited-members.ts). A project's members take read_members, as the API's
 * members routes; a group's, reading the group.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.ts';
import { inheritedMembersQuery, type MemberSource } from '../../../domain/members/inherited-members.ts';
import { ROLE_NAMES } from '../../../http/audit.ts';
import type { FastifyRequest } from 'fastify';
import { html, type SafeHtml } from '../../html.ts';
import { frame } from '../../layout.ts';
import { pageError, type WebArea } from '../../router.ts';
import { pageNumber, pagination } from '../../components/lists.ts';
import { encodePath } from '../repository/repository-page.ts';

const MEMBERS_PER_PAGE = 50;

async function memberList(db: Kysely<DB>, request: FastifyRequest, source: MemberSource, path: string): Promise<SafeHtml> {
  const page = pageNumber(request);
  const rows = await (await inheritedMembersQuery(db, source)).limit(MEMBERS_PER_PAGE + 1).offset((page - 1) * MEMBERS_PER_PAGE).execute();
  const items = rows.slice(0, MEMBERS_PER_PAGE).map((m) => html`<tr><td><a href="/${encodeURIComponent(m.username)}">${m.name}</a>
<span class="muted">@${m.username}</span></td><td>${ROLE_NAMES[m.access_level] ?? String(m.access_level)}</td><td class="muted">${m.expires_at ?? ''}</td></tr>`);
  return html`${items.length === 0 ? html`<p class="muted">No members to show.</p>` : html`<table class="tree" id="members">
<thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col">Expires</th></tr></thead><tbody>${items}</tbody></table>`}
${pagination(path, page, rows.length > MEMBERS_PER_PAGE)}`;
}

const members: WebArea = (web) => {
  web.project('GET', 'project_members', async (p) => {
    if (p.rest.length > 0 || !p.project.can('read_members')) throw pageError(404);
    const path = `/${encodePath(p.project.fullPath)}/-/project_members`;
    return p.render({
      title: 'Members', active: 'project_members',
      body: await memberList(p.ctx.db, p.request, { type: 'Project', id: p.project.project.id, lineage: p.project.lineage }, path),
    });
  });

  web.group('GET', 'group_members', async (p) => {
    if (p.rest.length > 0) throw pageError(404);
    const base = `/groups/${encodePath(p.group.fullPath)}`;
    return frame({
      title: `${p.group.group.name} members`, signedIn: p.signedIn,
      breadcrumbs: [{ text: p.group.fullName, href: base }],
      body: await memberList(p.ctx.db, p.request, { type: 'Namespace', id: p.group.group.id, lineage: p.group.lineage }, `${base}/-/group_members`),
    });
  });
};

export default members;
