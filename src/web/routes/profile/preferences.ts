/**
 * /-/profile/preferences (issue 33 item 6; the Service's Profiles::PreferencesController): the
 * preferences GET/PUT /user/preferences expose — whether a diff shows one file at a time and
 * whether it shows whitespace changes — set through the same domain write
 * (user-preferences.queries.ts updatePreferences). A checkbox left unticked is false, so the form
 * always sets both, as PUT requires both. Reading the page writes nothing: a user who never saved
 * sees the defaults (one file at a time off, whitespace shown: the table's column defaults), as
 * the Service builds preferences on demand. kiln's pages follow the
 * system's light or dark colour scheme (layout.ts), so there is no theme to choose here.
 */
import type { UserRow } from '../../../db/types.ts';
import { findPreferences, updatePreferences } from '../../../domain/user-preferences/user-preferences.queries.ts';
import { html, type SafeHtml } from '../../html.ts';
import { redirect } from '../../layout.ts';
import type { PageRequest, WebArea } from '../../router.ts';
import { csrfInput, field, flashOf, formOf, profileFrame, profileUser, type Flash } from './profile-view.ts';

const BACK = '/-/profile/preferences';

const checked = (on: boolean | undefined) => (on ? html` checked` : '');

async function render(p: PageRequest, user: UserRow, flash: Flash = {}): Promise<SafeHtml> {
  const prefs = await findPreferences(p.ctx.db, user.id);
  return profileFrame(p, {
    title: 'Preferences', active: 'preferences',
    body: html`${flashOf(flash)}
<form method="post" action="${BACK}" id="preferences">${csrfInput(p)}
<section class="panel" aria-labelledby="behavior-heading"><h2 id="behavior-heading">Behavior</h2>
<p><input type="checkbox" id="view-diffs-file-by-file" name="view_diffs_file_by_file" value="1"${checked(prefs?.view_diffs_file_by_file === 1)}>
<label for="view-diffs-file-by-file">Show one file at a time on merge request's Changes tab</label></p>
<p><input type="checkbox" id="show-whitespace-in-diffs" name="show_whitespace_in_diffs" value="1"${checked(prefs ? prefs.show_whitespace_in_diffs === 1 : true)}>
<label for="show-whitespace-in-diffs">Show whitespace changes in diffs</label></p>
</section>
<p class="muted">kiln's pages follow your system's light or dark colour scheme.</p>
<button type="submit" class="primary">Save changes</button>
</form>`,
  });
}

const preferences: WebArea = (web) => {
  web.page('GET', BACK, async (p) => {
    const user = profileUser(p);
    if (!user) return p.reply;
    const saved = (p.request.query as Record<string, unknown>).saved === '1';
    return render(p, user, saved ? { notice: 'Preferences saved.' } : {});
  });

  web.page('POST', BACK, async (p) => {
    const f = formOf(p);
    await updatePreferences(p.ctx.db, p.session!.user.id, {
      view_diffs_file_by_file: field(f, 'view_diffs_file_by_file') === '1',
      show_whitespace_in_diffs: field(f, 'show_whitespace_in_diffs') === '1',
    });
    return redirect(p.reply, 'POST', `${BACK}?saved=1`);
  });
};

export default preferences;
