/**
 * /admin/users (issue 33 item 6; the Service's admin area `resources :users` with its `block`,
 * `unblock`, `deactivate`, `activate` and `approve` members): administrators list every user with
 * a search and a state filter, and change a user's state through the same decisions and
 * transitions as POST /users/:id/<operation> (domain/users/state-operations.ts), refused with the
 * API's messages and audited in its words. Anyone else gets the 404 page, as the Service's admin
 * area answers non-administrators; an anonymous browser is sent to sign in.
 */
import type { UserRow } from '../../../db/types.ts';
import { recordAuditEvent } from '../../../domain/audit-events/record-audit-event.ts';
import { findUsers, type UsersFinderParams } from '../../../domain/users/users.finder.ts';
import {
  approveUser, DECIDE, fireUserEvent, NOT_PENDING_APPROVAL, type StateOperation,
} from '../../../domain/users/state-operations.ts';
import { humanStateName } from '../../../domain/users/state-machine.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { html, type SafeHtml } from '../../html.ts';
import { frame, redirect, sendPage } from '../../layout.ts';
import { pageError, type PageRequest, type WebArea } from '../../router.ts';
import { redirectToSignIn } from '../../session.ts';
import { timeTag } from '../../ci-view.ts';
import { csrfInput, flashOf, ID, type Flash } from '../profile/profile-view.ts';

const PER_PAGE = 50;
const MAX_SEARCH = 255;
const BACK = '/admin/users';

/** The Service's admin users tabs, each a finder filter or one state. */
const FILTERS: Record<string, { label: string; params?: Partial<UsersFinderParams>; state?: string }> = {
  '': { label: 'Active', params: { active: true } },
  all: { label: 'All' },
  admins: { label: 'Admins', params: { admins: true } },
  external: { label: 'External', params: { external: true } },
  blocked: { label: 'Blocked', params: { blocked: true } },
  banned: { label: 'Banned', state: 'banned' },
  blocked_pending_approval: { label: 'Pending approval', state: 'blocked_pending_approval' },
  deactivated: { label: 'Deactivated', state: 'deactivated' },
  wop: { label: 'Without projects', params: { withoutProjects: true } },
};

type Operation = StateOperation | 'approve';
const OPERATIONS: Operation[] = ['block', 'unblock', 'deactivate', 'activate', 'approve'];
const DONE: Record<Operation, string> = {
  block: 'Blocked', unblock: 'Unblocked', deactivate: 'Deactivated', activate: 'Activated',
  ban: 'Banned', unban: 'Unbanned', approve: 'Approved',
};

/** The operations offered for a user's state (the API still decides; the page offers what makes sense). */
function offered(user: UserRow): Operation[] {
  switch (user.state) {
    case 'active': return ['block', 'deactivate'];
    case 'blocked': return ['unblock'];
    case 'deactivated': return ['activate'];
    case 'blocked_pending_approval': return ['approve', 'block'];
    default: return [];
  }
}

/** The signed-in administrator; 404 for anyone else, a sign-in redirect (null) for anonymous GETs. */
export function admin(p: PageRequest): UserRow | null {
  if (!p.session) {
    redirectToSignIn(p.request, p.reply);
    return null;
  }
  if (p.session.user.admin !== 1) throw pageError(404);
  return p.session.user;
}

function query(p: PageRequest): { search: string; filter: string } {
  const q = (p.request.query ?? {}) as Record<string, unknown>;
  const search = typeof q.search === 'string' ? q.search.slice(0, MAX_SEARCH) : '';
  const filter = typeof q.filter === 'string' && Object.hasOwn(FILTERS, q.filter) ? q.filter : '';
  return { search, filter };
}

async function render(p: PageRequest, flash: Flash = {}): Promise<SafeHtml> {
  const { search, filter } = query(p);
  const chosen = FILTERS[filter]!;
  let q = findUsers(p.ctx.db, {
    admin: true, orderBy: 'id', sort: 'desc', excludeInternal: true, ...(search ? { search } : {}), ...chosen.params,
  });
  if (chosen.state) q = q.where('users.state', '=', chosen.state);
  const users = await q.limit(PER_PAGE).execute();
  const tab = (key: string) => `${BACK}?${new URLSearchParams({ ...(key ? { filter: key } : {}), ...(search ? { search } : {}) })}`;
  return frame({
    title: 'Users', signedIn: p.signedIn, breadcrumbs: [{ text: 'Admin Area' }, { text: 'Users' }],
    body: html`${flashOf(flash)}
<nav aria-label="User states"><ul class="tabs">${Object.entries(FILTERS).map(([key, f]) => html`<li><a href="${tab(key)}"${key === filter ? html` aria-current="page"` : ''}>${f.label}</a></li>`)}</ul></nav>
<form method="get" action="${BACK}" role="search">${filter ? html`<input type="hidden" name="filter" value="${filter}">` : ''}
<label for="user-search">Search by name, email or username</label><input type="search" id="user-search" name="search" maxlength="${MAX_SEARCH}" value="${search}">
<button type="submit">Search</button></form>
${users.length === 0 ? html`<p>No users found.</p>` : html`<table><thead><tr><th scope="col">Name</th><th scope="col">Username</th><th scope="col">Email</th><th scope="col">State</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${users.map((u) => html`<tr><td>${u.name}${u.admin ? html` <span class="badge">Admin</span>` : ''}</td><td><a href="/${u.username}">${u.username}</a></td><td>${u.email}</td>
<td id="state-${u.id}">${humanStateName(u.state)}</td><td>${timeTag(u.created_at)}</td>
<td>${offered(u).map((op) => html`<form class="inline" method="post" action="${BACK}/${u.id}/${op}">${csrfInput(p)}<button type="submit" aria-label="${op} ${u.username}">${op.charAt(0).toUpperCase() + op.slice(1)}</button></form>`)}</td></tr>`)}</tbody></table>`}
${users.length === PER_PAGE ? html`<p class="muted">The first ${PER_PAGE} users are shown; narrow the search for others.</p>` : ''}`,
  });
}

const users: WebArea = (web) => {
  web.page('GET', BACK, async (p) => (admin(p) ? render(p) : p.reply));

  web.page('POST', `${BACK}/:id/:operation`, async (p) => {
    const actor = admin(p)!;
    const { id, operation } = p.params;
    const op = OPERATIONS.find((o) => o === operation);
    const user = op && ID.test(id) ? await findUserById(p.ctx.db, Number(id)) : undefined;
    if (!op || !user) throw pageError(404);
    let refusal: string | null = null;
    let changed = false;
    if (op === 'approve') {
      refusal = (await approveUser(p.ctx.db, user)) === null ? null : NOT_PENDING_APPROVAL;
      changed = refusal === null;
    } else {
      const decision = DECIDE[op](user, new Date());
      if (decision.kind === 'refuse') refusal = decision.message;
      else if (decision.event !== null) changed = await fireUserEvent(p.ctx.db, user, decision.event);
    }
    if (refusal !== null) return sendPage(p.reply, 400, await render(p, { errors: [refusal] }));
    if (changed) {
      await recordAuditEvent(p.ctx.db, { id: actor.id, name: actor.name }, p.request.ip, {
        entityType: 'User', entityId: user.id, entityPath: user.username,
        target: { id: user.id, type: 'User', details: user.username }, message: `${DONE[op]} user ${user.username}`,
      });
    }
    return redirect(p.reply, 'POST', BACK);
  });
};

export default users;
