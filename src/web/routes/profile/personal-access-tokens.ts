/**
 * /-/profile/personal_access_tokens (issue 33 item 6; the Service's profile routes
 * `resources :personal_access_tokens` with `put :revoke`): the signed-in user's personal access
 * tokens — active ones and the inactive (revoked or expired) ones, as GET /personal_access_tokens
 * lists them — created with a name, scopes and an expiry date through the same domain rules as the
 * API's token creation (domain/tokens/create-token.ts), the new token shown once on the page that
 * created it (only its digest is stored), and revoked as DELETE /personal_access_tokens/:id does for
 * the token's owner, audited in the API's words.
 */
import type { PersonalAccessTokenRow, UserRow } from '../../../db/types.ts';
import { todayDate } from '../../../domain/clock.ts';
import { availableScopesFor, createToken } from '../../../domain/tokens/create-token.ts';
import { findPersonalAccessTokenById, revokePersonalAccessToken, tokensQuery } from '../../../domain/tokens/tokens.queries.ts';
import { html, type SafeHtml } from '../../html.ts';
import { redirect, sendPage } from '../../layout.ts';
import { pageError, type PageRequest, type WebArea } from '../../router.ts';
import { timeTag } from '../../ci-view.ts';
import {
  auditOwn, csrfInput, dateField, field, flashOf, formOf, ID, messages, profileFrame, profileUser, type Flash, type Form,
} from './profile-view.ts';

const MAX_ROWS = 200;
const BACK = '/-/profile/personal_access_tokens';

function scopesOf(f: Form): string[] {
  const raw = f['scopes[]'] ?? f.scopes;
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  return list.filter((s): s is string => typeof s === 'string');
}

function table(p: PageRequest, rows: PersonalAccessTokenRow[], active: boolean): SafeHtml {
  if (rows.length === 0) return html`<p>${active ? 'This user has no active personal access tokens.' : 'No inactive tokens.'}</p>`;
  return html`<table><thead><tr><th scope="col">Token name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th>${active ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ''}</tr></thead>
<tbody>${rows.map((r) => html`<tr><td>${r.name}</td><td>${r.scopes.split(/[\s,]+/).filter(Boolean).join(', ')}</td><td>${timeTag(r.created_at)}</td>
<td>${r.last_used_at ? timeTag(r.last_used_at) : 'Never'}</td><td>${r.revoked ? 'Revoked' : r.expires_at ?? 'Never'}</td>
${active ? html`<td><form class="inline" method="post" action="${BACK}/${r.id}/revoke">${csrfInput(p)}<button type="submit" aria-label="Revoke token ${r.name}">Revoke</button></form></td>` : ''}</tr>`)}</tbody></table>`;
}

async function render(p: PageRequest, user: UserRow, flash: Flash = {}, typed: Form = {}): Promise<SafeHtml> {
  const today = todayDate(new Date());
  const own = { userId: user.id, impersonation: false } as const;
  const [active, inactive] = await Promise.all([
    tokensQuery(p.ctx.db, { ...own, state: 'active' }, today).limit(MAX_ROWS).execute(),
    tokensQuery(p.ctx.db, { ...own, state: 'inactive' }, today).limit(MAX_ROWS).execute(),
  ]);
  const chosen = new Set(scopesOf(typed));
  return profileFrame(p, {
    title: 'Personal access tokens', active: 'personal_access_tokens',
    body: html`${flashOf(flash)}
<section class="panel" aria-labelledby="add-token-heading"><h2 id="add-token-heading">Add a personal access token</h2>
<form method="post" action="${BACK}">${csrfInput(p)}
<label for="token-name">Token name</label><input type="text" id="token-name" name="name" required maxlength="255" value="${field(typed, 'name') ?? ''}">
<label for="token-expires">Expiration date</label><input type="date" id="token-expires" name="expires_at" min="${today}" value="${field(typed, 'expires_at') ?? ''}">
<fieldset><legend>Select scopes</legend>
${availableScopesFor(user).map((s) => html`<label class="check"><input type="checkbox" name="scopes[]" value="${s}"${chosen.has(s) ? ' checked' : ''}> ${s}</label>`)}
</fieldset>
<button type="submit" class="primary">Create personal access token</button></form>
</section>
<section class="panel" aria-labelledby="active-heading"><h2 id="active-heading">Active personal access tokens (${active.length})</h2>
${table(p, active, true)}
</section>
<section class="panel" aria-labelledby="inactive-heading"><h2 id="inactive-heading">Inactive personal access tokens (${inactive.length})</h2>
${table(p, inactive, false)}
</section>`,
  });
}

const personalAccessTokens: WebArea = (web) => {
  web.page('GET', BACK, async (p) => {
    const user = profileUser(p);
    return user ? render(p, user) : p.reply;
  });

  web.page('POST', BACK, async (p) => {
    const user = p.session!.user;
    const f = formOf(p);
    const expiresAt = dateField(field(f, 'expires_at'));
    if (expiresAt === undefined) return sendPage(p.reply, 400, await render(p, user, { errors: ['expires_at is invalid'] }, f));
    const result = await createToken(p.ctx.db, user, {
      name: field(f, 'name') ?? '', scopes: scopesOf(f), expiresAt, impersonation: false,
    });
    if (!result.ok) return sendPage(p.reply, 400, await render(p, user, { errors: messages(result.errors) }, f));
    await auditOwn(p, user, `Created personal access token with id ${result.value.row.id}`);
    // Shown once, on the page that made it: only the digest is stored.
    return sendPage(p.reply, 201, await render(p, user, {
      notice: html`Your new personal access token: <code id="created-personal-access-token">${result.value.token}</code>. Copy it now; it is not shown again.`,
    }));
  });

  web.page('POST', `${BACK}/:id/revoke`, async (p) => {
    const user = p.session!.user;
    const { id } = p.params;
    const token = ID.test(id) ? await findPersonalAccessTokenById(p.ctx.db, Number(id)) : undefined;
    // Only one's own personal access tokens here (administrators revoke others' through the API).
    if (!token || token.user_id !== user.id || token.impersonation) throw pageError(404);
    await revokePersonalAccessToken(p.ctx.db, token.id);
    await auditOwn(p, user, `Revoked personal access token with id ${token.id}`);
    return redirect(p.reply, 'POST', BACK);
  });
};

export default personalAccessTokens;
