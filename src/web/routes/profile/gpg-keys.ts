/**
 * /-/profile/gpg_keys (issue 33 item 6; the Service's profile routes `resources :gpg_keys` with
 * `put :revoke`): the signed-in user's GPG keys listed, added through the same rules as POST
 * /user/gpg_keys (domain/gpg-keys/create-gpg-key.ts: an armored public key that parses, not
 * already taken) and removed as DELETE /user/gpg_keys/:key_id and its revoke do (kiln's revocation
 * removes the key, as the API's). Another user's key is not found.
 */
import type { UserRow } from '../../../db/types.ts';
import { createGpgKey } from '../../../domain/gpg-keys/create-gpg-key.ts';
import { deleteGpgKey, findUserGpgKey, userGpgKeysQuery } from '../../../domain/gpg-keys/gpg-keys.queries.ts';
import { html, type SafeHtml } from '../../html.ts';
import { redirect, sendPage } from '../../layout.ts';
import { pageError, type PageRequest, type WebArea } from '../../router.ts';
import { timeTag } from '../../ci-view.ts';
import {
  csrfInput, field, flashOf, formOf, ID, messages, profileFrame, profileUser, type Flash, type Form,
} from './profile-view.ts';

const MAX_ROWS = 200;
/** The API's bound on the key's text: its default string limit (http/input/params.ts DEFAULT_MAX_STRING). */
const MAX_KEY = 1_048_576;
const BACK = '/-/profile/gpg_keys';

async function render(p: PageRequest, user: UserRow, flash: Flash = {}, typed: Form = {}): Promise<SafeHtml> {
  const keys = await userGpgKeysQuery(p.ctx.db, user.id).limit(MAX_ROWS).execute();
  return profileFrame(p, {
    title: 'GPG keys', active: 'gpg_keys',
    body: html`${flashOf(flash)}
<section class="panel" aria-labelledby="add-gpg-heading"><h2 id="add-gpg-heading">Add a GPG key</h2>
<form method="post" action="${BACK}">${csrfInput(p)}
<label for="gpg-key">Key</label><textarea id="gpg-key" name="key" rows="8" required placeholder="-----BEGIN PGP PUBLIC KEY BLOCK-----">${field(typed, 'key') ?? ''}</textarea>
<button type="submit" class="primary">Add key</button></form>
</section>
<section class="panel" aria-labelledby="gpg-keys-heading"><h2 id="gpg-keys-heading">Your GPG keys (${keys.length})</h2>
${keys.length === 0 ? html`<p>There are no GPG keys associated with this account.</p>` : html`<table><thead><tr><th scope="col">Key ID</th><th scope="col">Fingerprint</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${keys.map((k) => html`<tr><td><code>${k.primary_keyid}</code></td><td><code>${k.fingerprint}</code></td><td>${timeTag(k.created_at)}</td>
<td><form class="inline" method="post" action="${BACK}/${k.id}/delete">${csrfInput(p)}<button type="submit" aria-label="Remove GPG key ${k.primary_keyid}">Remove</button></form></td></tr>`)}</tbody></table>`}
</section>`,
  });
}

const gpgKeys: WebArea = (web) => {
  web.page('GET', BACK, async (p) => {
    const user = profileUser(p);
    return user ? render(p, user) : p.reply;
  });

  web.page('POST', BACK, async (p) => {
    const user = p.session!.user;
    const f = formOf(p);
    const key = field(f, 'key') ?? '';
    if (key.length > MAX_KEY) return sendPage(p.reply, 400, await render(p, user, { errors: ['key is too long'] }));
    const result = await createGpgKey(p.ctx.db, user.id, key);
    if (!result.ok) return sendPage(p.reply, 400, await render(p, user, { errors: messages(result.errors) }, f));
    return redirect(p.reply, 'POST', BACK);
  });

  web.page('POST', `${BACK}/:id/delete`, async (p) => {
    const { id } = p.params;
    const key = ID.test(id) ? await findUserGpgKey(p.ctx.db, p.session!.user.id, Number(id)) : undefined;
    if (!key) throw pageError(404);
    await deleteGpgKey(p.ctx.db, key.id);
    return redirect(p.reply, 'POST', BACK);
  });
};

export default gpgKeys;
