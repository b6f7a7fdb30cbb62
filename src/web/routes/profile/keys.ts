/**
 * /-/profile/keys (issue 33 item 6; the Service's profile routes `resources :keys`): the signed-in
 * user's SSH keys listed, added and deleted through the same domain rules as GET/POST/DELETE
 * /user/keys (domain/keys/create-key.ts: title, key, fingerprint uniqueness, expiry, the instance's
 * key restrictions). A form that fails answers 400 with the API's messages and keeps what was typed.
 */
import type { KeyUsageType } from '../../../db/tables/keys.ts';
import type { UserRow } from '../../../db/types.ts';
import { createKey } from '../../../domain/keys/create-key.ts';
import { deleteKey, findUserKey, userKeysQuery } from '../../../domain/keys/keys.queries.ts';
import { html, type SafeHtml } from '../../html.ts';
import { redirect, sendPage } from '../../layout.ts';
import { pageError, type PageRequest, type WebArea } from '../../router.ts';
import { timeTag } from '../../ci-view.ts';
import {
  csrfInput, dateField, field, flashOf, formOf, ID, messages, profileFrame, profileUser, type Flash, type Form,
} from './profile-view.ts';

const MAX_ROWS = 200;
const USAGE_TYPES: { value: KeyUsageType; label: string }[] = [
  { value: 'auth_and_signing', label: 'Authentication & Signing' },
  { value: 'auth', label: 'Authentication' },
  { value: 'signing', label: 'Signing' },
];
const BACK = '/-/profile/keys';

async function render(p: PageRequest, user: UserRow, flash: Flash = {}, typed: Form = {}): Promise<SafeHtml> {
  const keys = await userKeysQuery(p.ctx.db, user.id).limit(MAX_ROWS).execute();
  const usage = field(typed, 'usage_type') ?? 'auth_and_signing';
  return profileFrame(p, {
    title: 'SSH keys', active: 'keys',
    body: html`${flashOf(flash)}
<section class="panel" aria-labelledby="add-key-heading"><h2 id="add-key-heading">Add an SSH key</h2>
<form method="post" action="${BACK}">${csrfInput(p)}
<label for="key-key">Key</label><textarea id="key-key" name="key" rows="4" required maxlength="5000" placeholder="Begins with ssh-rsa, ssh-ed25519, ecdsa-sha2-nistp256 …">${field(typed, 'key') ?? ''}</textarea>
<label for="key-title">Title</label><input type="text" id="key-title" name="title" required maxlength="255" value="${field(typed, 'title') ?? ''}">
<label for="key-usage">Usage type</label><select id="key-usage" name="usage_type">${USAGE_TYPES.map((u) => html`<option value="${u.value}"${u.value === usage ? ' selected' : ''}>${u.label}</option>`)}</select>
<label for="key-expires">Expiration date</label><input type="date" id="key-expires" name="expires_at" value="${field(typed, 'expires_at') ?? ''}">
<button type="submit" class="primary">Add key</button></form>
</section>
<section class="panel" aria-labelledby="keys-heading"><h2 id="keys-heading">Your SSH keys (${keys.length})</h2>
${keys.length === 0 ? html`<p>There are no SSH keys with access to your account.</p>` : html`<table><thead><tr><th scope="col">Title</th><th scope="col">Fingerprint (SHA256)</th><th scope="col">Usage</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${keys.map((k) => html`<tr><td>${k.title}</td><td><code>${k.fingerprint_sha256}</code></td><td>${USAGE_TYPES.find((u) => u.value === k.usage_type)?.label ?? k.usage_type}</td>
<td>${timeTag(k.created_at)}</td><td>${k.last_used_at ? timeTag(k.last_used_at) : 'Never'}</td><td>${k.expires_at ? timeTag(k.expires_at) : 'Never'}</td>
<td><form class="inline" method="post" action="${BACK}/${k.id}/delete">${csrfInput(p)}<button type="submit" aria-label="Delete key ${k.title}">Delete</button></form></td></tr>`)}</tbody></table>`}
</section>`,
  });
}

const keys: WebArea = (web) => {
  web.page('GET', '/-/profile/keys', async (p) => {
    const user = profileUser(p);
    return user ? render(p, user) : p.reply;
  });

  web.page('POST', '/-/profile/keys', async (p) => {
    const user = p.session!.user;
    const f = formOf(p);
    const usage = field(f, 'usage_type') ?? 'auth_and_signing';
    const expires = field(f, 'expires_at') ?? '';
    const errors: string[] = [];
    if (!USAGE_TYPES.some((u) => u.value === usage)) errors.push('usage_type does not have a valid value');
    const day = dateField(expires);
    const expiresAt = day ? `${day}T00:00:00.000Z` : day;
    if (expiresAt === undefined) errors.push('expires_at is invalid');
    if (errors.length > 0) return sendPage(p.reply, 400, await render(p, user, { errors }, f));
    const result = await createKey(p.ctx.db, {
      userId: user.id, title: field(f, 'title') ?? '', key: field(f, 'key') ?? '',
      expiresAt: expiresAt ?? null, usageType: usage as KeyUsageType,
    });
    if (!result.ok) return sendPage(p.reply, 400, await render(p, user, { errors: messages(result.errors) }, f));
    return redirect(p.reply, 'POST', BACK);
  });

  web.page('POST', '/-/profile/keys/:id/delete', async (p) => {
    const { id } = p.params;
    // Another user's key is not found, as DELETE /user/keys/:key_id scopes it to the caller.
    const key = ID.test(id) ? await findUserKey(p.ctx.db, p.session!.user.id, Number(id)) : undefined;
    if (!key) throw pageError(404);
    await deleteKey(p.ctx.db, key.id);
    return redirect(p.reply, 'POST', BACK);
  });
};

export default keys;
