/**
 * /-/profile/emails (issue 33 item 6; the Service's Profiles::EmailsController): the signed-in
 * user's primary email and secondary emails with their confirmation state, a form to add one and
 * a button to delete one, through the same domain rules as GET/POST/DELETE /user/emails
 * (domain/emails/create-email.ts: format, nobody's email yet ignoring case; added unconfirmed).
 * A form that fails answers 400 with the API's messages and keeps what was typed.
 */
import type { UserRow } from '../../../db/types.ts';
import { isStorableText } from '../../../db/constraints.ts';
import { createEmail } from '../../../domain/emails/create-email.ts';
import { deleteEmail, findUserEmail, userEmailsQuery } from '../../../domain/emails/emails.queries.ts';
import { html, type SafeHtml } from '../../html.ts';
import { redirect, sendPage } from '../../layout.ts';
import { pageError, type PageRequest, type WebArea } from '../../router.ts';
import { timeTag } from '../../ci-view.ts';
import { csrfInput, field, flashOf, formOf, ID, messages, profileFrame, profileUser, type Flash, type Form } from './profile-view.ts';

const MAX_ROWS = 200;
const BACK = '/-/profile/emails';

async function render(p: PageRequest, user: UserRow, flash: Flash = {}, typed: Form = {}): Promise<SafeHtml> {
  const emails = await userEmailsQuery(p.ctx.db, user.id).limit(MAX_ROWS).execute();
  return profileFrame(p, {
    title: 'Emails', active: 'emails',
    body: html`${flashOf(flash)}
<section class="panel" aria-labelledby="add-email-heading"><h2 id="add-email-heading">Add an email address</h2>
<form method="post" action="${BACK}">${csrfInput(p)}
<label for="email-email">Email</label><input type="email" id="email-email" name="email" required maxlength="255" value="${field(typed, 'email') ?? ''}">
<button type="submit" class="primary">Add email address</button></form>
<p class="muted">An address you add stays unconfirmed until it is confirmed.</p>
</section>
<section class="panel" aria-labelledby="emails-heading"><h2 id="emails-heading">Linked emails (${emails.length + 1})</h2>
<table id="emails"><thead><tr><th scope="col">Email</th><th scope="col">State</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody><tr><td>${user.email}</td><td>Primary email</td><td></td><td></td></tr>
${emails.map((e) => html`<tr><td>${e.email}</td><td>${e.confirmed_at ? html`Confirmed ${timeTag(e.confirmed_at)}` : 'Unconfirmed'}</td><td>${timeTag(e.created_at)}</td>
<td><form class="inline" method="post" action="${BACK}/${e.id}/delete">${csrfInput(p)}<button type="submit" aria-label="Remove ${e.email}">Remove</button></form></td></tr>`)}</tbody></table>
</section>`,
  });
}

const emails: WebArea = (web) => {
  web.page('GET', BACK, async (p) => {
    const user = profileUser(p);
    return user ? render(p, user) : p.reply;
  });

  web.page('POST', BACK, async (p) => {
    const user = p.session!.user;
    const f = formOf(p);
    const email = field(f, 'email') ?? '';
    // The API's P.name bound: longer text, or text no column can hold, never reaches the database.
    if (email.length > 255 || !isStorableText(email)) {
      return sendPage(p.reply, 400, await render(p, user, { errors: ['email is invalid'] }, {}));
    }
    const result = await createEmail(p.ctx.db, { userId: user.id, email, skipConfirmation: false });
    if (!result.ok) return sendPage(p.reply, 400, await render(p, user, { errors: messages(result.errors) }, f));
    return redirect(p.reply, 'POST', BACK);
  });

  web.page('POST', `${BACK}/:id/delete`, async (p) => {
    const { id } = p.request.params as { id: string };
    // Another user's email is not found, as DELETE /user/emails/:email_id scopes it to the caller.
    const email = ID.test(id) ? await findUserEmail(p.ctx.db, p.session!.user.id, Number(id)) : undefined;
    if (!email) throw pageError(404);
    await deleteEmail(p.ctx.db, email.id);
    return redirect(p.reply, 'POST', BACK);
  });
};

export default emails;
