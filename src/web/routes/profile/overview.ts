/**
 * /-/profile (issue 33 item 6): the signed-in user's account at a glance — name, username and
 * primary email — and the way to each of the user settings pages (profile-view.ts ENTRIES), as
 * the Service's user settings start at /-/profile.
 */
import { html } from '../../html.ts';
import type { WebArea } from '../../router.ts';
import { ENTRIES, profileFrame, profileUser } from './profile-view.ts';

const overview: WebArea = (web) => {
  web.page('GET', '/-/profile', async (p) => {
    const user = profileUser(p);
    if (!user) return p.reply;
    return profileFrame(p, {
      title: 'Profile', active: 'profile',
      body: html`<section class="panel" aria-labelledby="account-heading"><h2 id="account-heading">Account</h2>
<dl id="account"><dt>Name</dt><dd>${user.name}</dd><dt>Username</dt><dd><a href="/${encodeURIComponent(user.username)}">${user.username}</a></dd><dt>Primary email</dt><dd>${user.email}</dd></dl>
</section>
<section class="panel" aria-labelledby="settings-heading"><h2 id="settings-heading">User settings</h2>
<ul id="settings">${ENTRIES.filter((e) => e.segment !== 'profile').map((e) => html`<li><a href="${e.href}">${e.label}</a></li>`)}</ul>
</section>`,
    });
  });
};

export default overview;
