/**
 * Audit events (issue 16, item 4): what kiln's own operations record (users created, blocked,
 * deleted; tokens created and revoked; members added and removed; storage moves; OAuth
 * applications), and the instance, group (keyset order_by=id, sort=desc) and project lists with
 * their permissions and filters.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { followNext, parseLink } from '../helpers/pagination.ts';
import { makeShards, type Shards } from '../helpers/storage-shards.ts';

interface Event { id: number; author_id: number; entity_id: number; entity_type: string; details: Record<string, unknown>; created_at: string }

describe('audit events', () => {
  let t: TestApp;
  let shards: Shards;
  let userToken: string;

  before(async () => {
    shards = await makeShards(['default', 'other']);
    t = await startTestApp({ KILN_STORAGES: shards.env });
    userToken = await createToken(t.db, await createUser(t.db));
  });
  after(async () => {
    await t.close();
    await shards.remove();
  });

  const get = (url: string, token = ROOT_TOKEN) => t.request({ url: `/api/v4${url}`, token });
  const events = async (url: string, token = ROOT_TOKEN): Promise<Event[]> => {
    const res = await get(url, token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  it('records what administrators do to users and their tokens, for the instance list', async () => {
    const created = await t.request({
      method: 'POST', url: '/api/v4/users', token: ROOT_TOKEN,
      payload: { email: 'audited@example.com', username: 'audited', name: 'Audited', password: 'a-long-password-1' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id;
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/users/${id}/block`, token: ROOT_TOKEN })).statusCode, 201);
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/users/${id}/unblock`, token: ROOT_TOKEN })).statusCode, 201);
    const pat = await t.request({ method: 'POST', url: `/api/v4/users/${id}/personal_access_tokens`, token: ROOT_TOKEN, payload: { name: 'p', scopes: ['api'] } });
    assert.equal(pat.statusCode, 201);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/personal_access_tokens/${pat.json().id}`, token: ROOT_TOKEN })).statusCode, 204);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/users/${id}`, token: ROOT_TOKEN })).statusCode, 204);

    const list = await events(`/audit_events?entity_type=User&entity_id=${id}`);
    assert.deepEqual(list.map((e) => e.details.custom_message), [
      'Removed user audited',
      `Revoked personal access token with id ${pat.json().id}`,
      `Created personal access token with id ${pat.json().id}`,
      'Unblocked user audited',
      'Blocked user audited',
      'User audited created',
    ]);
    const first = list[list.length - 1];
    assert.deepEqual({ ...first, id: 0, created_at: '' }, {
      id: 0, created_at: '', author_id: 1, entity_id: id, entity_type: 'User',
      details: {
        custom_message: 'User audited created', author_name: 'Administrator', author_class: 'User',
        target_id: id, target_type: 'User', target_details: 'audited', ip_address: '127.0.0.1', entity_path: 'audited',
      },
    });
    assert.deepEqual((await get(`/audit_events/${first.id}`)).json(), first);
    assert.deepEqual((await get('/audit_events/999999')).json(), { message: '404 Audit Event Not Found' });
    assert.deepEqual((await get(`/audit_events/${2 ** 31}`)).json(), { message: '404 Audit Event Not Found' });
    assert.equal((await get('/audit_events', userToken)).statusCode, 403);
    assert.equal((await get(`/audit_events/${first.id}`, userToken)).statusCode, 403);
    // Filters by time.
    assert.deepEqual(await events(`/audit_events?entity_id=${id}&entity_type=User&created_before=2000-01-01T00:00:00Z`), []);
    assert.equal((await events(`/audit_events?entity_id=${id}&entity_type=User&created_after=2000-01-01T00:00:00Z`)).length, 6);
    assert.equal((await get('/audit_events?entity_type=Pipeline')).statusCode, 400);
  });

  it('records members added and removed on the project, for its maintainers', async () => {
    const owner = await createUser(t.db, { username: 'proj-owner' });
    const ownerToken = await createToken(t.db, owner);
    const project = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'Audited Project' } })).json();
    const dev = await createUser(t.db, { username: 'proj-dev' });
    assert.equal((await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/members`, token: ownerToken, payload: { user_id: dev.id, access_level: 30 } })).statusCode, 201);
    assert.equal((await t.request({ method: 'PUT', url: `/api/v4/projects/${project.id}/members/${dev.id}`, token: ownerToken, payload: { access_level: 40 } })).statusCode, 200);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/projects/${project.id}/members/${dev.id}`, token: ownerToken })).statusCode, 204);
    const all = await events(`/projects/${project.id}/audit_events`, ownerToken);
    assert.equal(all.length, 3);
    assert.deepEqual([all[1].details.change, all[1].details.from, all[1].details.to], ['access_level', 'Developer', 'Maintainer']);
    const list = [all[0], all[2]];
    assert.deepEqual(list[1].details, {
      add: 'user_access', as: 'Developer', author_name: owner.name, author_class: 'User',
      target_id: dev.id, target_type: 'User', target_details: 'proj-dev', ip_address: '127.0.0.1', entity_path: project.path_with_namespace,
    });
    assert.equal(list[0].details.remove, 'user_access');
    assert.deepEqual([list[0].entity_type, list[0].entity_id, list[0].author_id], ['Project', project.id, owner.id]);
    assert.equal((await get(`/projects/${project.id}/audit_events/${list[0].id}`, ownerToken)).json().id, list[0].id);
    // Another entity's event is not this project's.
    const userEvent = (await events('/audit_events?entity_type=User'))[0];
    assert.equal((await get(`/projects/${project.id}/audit_events/${userEvent.id}`, ownerToken)).statusCode, 404);
    assert.equal((await get(`/projects/${project.id}/audit_events`, userToken)).statusCode, 404);
    const devToken = await createToken(t.db, dev);
    const readd = { user_id: dev.id, access_level: 20 };
    await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/members`, token: ownerToken, payload: readd });
    // Below Developer: refused.
    assert.equal((await get(`/projects/${project.id}/audit_events`, devToken)).statusCode, 403);
  });

  it('pages a group\'s events by keyset, order_by=id and sort=desc only, for owners', async () => {
    const owner = await createUser(t.db);
    const ownerToken = await createToken(t.db, owner);
    const group = (await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Audited', path: 'audited-group' } })).json();
    const added: number[] = [];
    for (let i = 0; i < 4; i++) {
      const u = await createUser(t.db);
      added.push(u.id);
      assert.equal((await t.request({ method: 'POST', url: `/api/v4/groups/${group.id}/members`, token: ownerToken, payload: { user_id: u.id, access_level: 20 } })).statusCode, 201);
    }
    const first = await get(`/groups/${group.id}/audit_events?pagination=keyset&order_by=id&sort=desc&per_page=2`, ownerToken);
    assert.equal(first.statusCode, 200);
    assert.deepEqual(first.json().map((e: Event) => e.details.target_id), [added[3], added[2]]);
    assert.match(parseLink(first.headers.link).get('next')!, /id_before=/);
    assert.equal(first.headers['x-total'], undefined);
    const pages = await followNext(t, `/api/v4/groups/${group.id}/audit_events?pagination=keyset&order_by=id&sort=desc&per_page=2`, { 'private-token': ownerToken });
    assert.deepEqual(pages.flatMap((p) => p.json().map((e: Event) => e.details.target_id)), [...added].reverse());
    // Two full pages, then the empty one without a Link header.
    assert.equal(pages.length, 3);
    assert.equal(pages[2].headers.link, undefined);
    const huge = await get(`/groups/${group.id}/audit_events?pagination=keyset&order_by=id&id_before=${2 ** 31}`, ownerToken);
    assert.equal(huge.json().length, 4);
    const asc = await get(`/groups/${group.id}/audit_events?pagination=keyset&order_by=id&sort=asc`, ownerToken);
    assert.equal(asc.statusCode, 405);
    const offset = await get(`/groups/${group.id}/audit_events?per_page=3`, ownerToken);
    assert.equal(offset.headers['x-total'], '4');
    const maintainer = await createUser(t.db);
    await t.request({ method: 'POST', url: `/api/v4/groups/${group.id}/members`, token: ownerToken, payload: { user_id: maintainer.id, access_level: 40 } });
    // A maintainer is below the group's owners: only the events they caused, none here.
    assert.deepEqual(await events(`/groups/${group.id}/audit_events`, await createToken(t.db, maintainer)), []);
    const one = (await events(`/groups/${group.id}/audit_events`, ownerToken))[0];
    assert.equal((await get(`/groups/${group.id}/audit_events/${one.id}`, ownerToken)).json().entity_type, 'Group');
  });

  it('refuses as the Service: who may read before the parameters, members below Maintainer or Owner see their own events', async () => {
    // The instance's and the group's and project's `before` blocks run ahead of parameter validation.
    const bogus = await get('/audit_events?entity_type=Bogus', userToken);
    assert.deepEqual([bogus.statusCode, bogus.json()], [403, { message: '403 Forbidden' }]);
    assert.equal((await get('/audit_events?entity_type=Bogus')).statusCode, 400);
    assert.equal((await get('/audit_events/x', userToken)).statusCode, 403);

    const owner = await createUser(t.db);
    const ownerToken = await createToken(t.db, owner);
    const create = (url: string, payload: object) => t.request({ method: 'POST', url: `/api/v4${url}`, token: ownerToken, payload });
    const project = (await create('/projects', { name: 'Own Events' })).json();
    const base = `/projects/${project.id}/audit_events`;
    const member = async (user: { id: number }, level: number, method = 'POST') => t.request({
      method, url: `/api/v4/projects/${project.id}/members${method === 'POST' ? '' : `/${user.id}`}`, token: ownerToken,
      payload: { user_id: user.id, access_level: level },
    });
    const dev = await createUser(t.db);
    const devToken = await createToken(t.db, dev);
    assert.equal((await member(dev, 40)).statusCode, 201);
    // As a maintainer the developer-to-be adds someone: an event they authored.
    const added = await createUser(t.db);
    assert.equal((await t.request({
      method: 'POST', url: `/api/v4/projects/${project.id}/members`, token: devToken, payload: { user_id: added.id, access_level: 10 },
    })).statusCode, 201);
    assert.equal((await member(dev, 30, 'PUT')).statusCode, 200);
    const own = await events(base, devToken);
    assert.deepEqual(own.map((e) => [e.author_id, e.details.target_id]), [[dev.id, added.id]]);
    const everyone = await events(base, ownerToken);
    assert.ok(everyone.length > own.length);
    const ownersEvent = everyone.find((e) => e.author_id === owner.id)!;
    // Another author's event is a RecordNotFound for the developer, as an unknown id is for anyone.
    assert.deepEqual((await get(`${base}/${ownersEvent.id}`, devToken)).json(), { message: '404 Not found' });
    assert.deepEqual((await get(`${base}/${2 ** 30}`, ownerToken)).json(), { message: '404 Not found' });
    assert.equal((await get(`${base}/${own[0].id}`, devToken)).json().id, own[0].id);
    // A reporter is refused before a malformed date is looked at; a developer gets the 400.
    const reporter = await createUser(t.db);
    assert.equal((await member(reporter, 20)).statusCode, 201);
    const refused = await get(`${base}?created_after=not-a-date`, await createToken(t.db, reporter));
    assert.deepEqual([refused.statusCode, refused.json()], [403, { message: '403 Forbidden' }]);
    assert.equal((await get(`${base}?created_after=not-a-date`, devToken)).statusCode, 400);
    // Someone who cannot see the project learns nothing, whatever the parameters.
    assert.equal((await get(`${base}?created_after=not-a-date`, userToken)).statusCode, 404);
    assert.equal((await get(`/projects/a%00b/audit_events`, devToken)).statusCode, 404);

    const group = (await create('/groups', { name: 'Own Group', path: 'own-group' })).json();
    const reporterInGroup = await createUser(t.db);
    await create(`/groups/${group.id}/members`, { user_id: reporterInGroup.id, access_level: 20 });
    const groupRefused = await get(`/groups/${group.id}/audit_events?sort=sideways`, await createToken(t.db, reporterInGroup));
    assert.deepEqual([groupRefused.statusCode, groupRefused.json()], [403, { message: '403 Forbidden' }]);
    assert.equal((await get(`/groups/${group.id}/audit_events?sort=sideways`, ownerToken)).statusCode, 400);
    assert.deepEqual((await get(`/groups/${group.id}/audit_events/${ownersEvent.id}`, ownerToken)).json(), { message: '404 Not found' });
  });

  it('records OAuth applications, project access tokens, storage moves, and who acted through sudo', async () => {
    const app = await t.request({ method: 'POST', url: '/api/v4/applications', token: ROOT_TOKEN, payload: { name: 'Audited App', redirect_uri: 'https://a.example/cb', scopes: 'api' } });
    assert.equal(app.statusCode, 201);
    assert.equal((await t.request({ method: 'DELETE', url: `/api/v4/applications/${app.json().id}`, token: ROOT_TOKEN })).statusCode, 204);
    const rootEvents = await events('/audit_events?entity_type=User&entity_id=1');
    assert.deepEqual(rootEvents.slice(0, 2).map((e) => e.details.custom_message), [
      `Deleted OAuth application Audited App (${app.json().id})`, `Created OAuth application Audited App (${app.json().id})`,
    ]);

    const owner = await createUser(t.db, { username: 'sudo-target' });
    const project = (await t.request({ method: 'POST', url: '/api/v4/projects', token: await createToken(t.db, owner), payload: { name: 'Tokens' } })).json();
    const sudoToken = await createToken(t.db, (await t.db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow()), { scopes: ['api', 'sudo'] });
    const token = await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/access_tokens?sudo=sudo-target`, token: sudoToken, payload: { name: 'audited', scopes: ['api'], access_level: 30 } });
    assert.equal(token.statusCode, 201, token.body);
    const move = await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/repository_storage_moves`, token: ROOT_TOKEN, payload: { destination_storage_name: 'other' } });
    assert.equal(move.statusCode, 201, move.body);
    const list = await events(`/projects/${project.id}/audit_events`);
    const created = list.find((e) => String(e.details.custom_message).startsWith('Created project access token'))!;
    assert.equal(created.details.custom_message, `Created project access token with token_id: ${token.json().id} with scopes: ["api"] and Developer access level.`);
    assert.equal(created.author_id, owner.id);
    assert.equal(created.details.impersonated_by, 'Administrator');
    const moved = list.find((e) => String(e.details.custom_message).startsWith('Scheduled a repository storage move'))!;
    assert.equal(moved.details.custom_message, `Scheduled a repository storage move of project ${project.id} from default to other`);
    assert.equal(moved.details.entity_path, project.path_with_namespace);
  });
});
