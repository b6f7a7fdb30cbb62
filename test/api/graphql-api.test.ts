/**
 * The GraphQL API (issue 18): the endpoint, credentials and their limits, the Service's error
 * shapes and messages, users, groups and runners, and the query limits. Queries are the ones the
 * Service's documentation gives for each type.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { getIntrospectionQuery } from 'graphql';
import type { UserRow } from '../../src/db/types.ts';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createAdmin, createOauthToken, createSession, createToken, createUser } from '../helpers/factories.ts';
import { csrfTokenFor } from '../../src/http/auth/session-token.ts';

describe('GraphQL API: endpoint, users, groups', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let readApiToken: string;
  let bob: UserRow;
  let bobToken: string;

  before(async () => {
    t = await startTestApp();
    alice = await createUser(t.db, { username: 'alice', name: 'Alice Liddell', public_email: null });
    aliceToken = await createToken(t.db, alice, { scopes: ['api'] });
    readApiToken = await createToken(t.db, alice, { scopes: ['read_api'] });
    bob = await createUser(t.db, { username: 'bob', name: 'Bob' });
    bobToken = await createToken(t.db, bob, { scopes: ['api'] });
  });
  after(async () => { await t.close(); });

  const gql = (query: string, o: { token?: string; variables?: object; headers?: Record<string, string> } = {}) => t.request({
    method: 'POST', url: '/api/graphql', ...(o.token ? { token: o.token } : {}), headers: o.headers,
    payload: { query, ...(o.variables ? { variables: o.variables } : {}) },
  });

  it('answers currentUser over POST and GET, with the Service global ids', async () => {
    // doc/api/graphql/getting_started.md: the first query of the guide.
    const res = await gql('query { currentUser { name username id webUrl state } }', { token: aliceToken });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(res.json(), { data: { currentUser: {
      name: 'Alice Liddell', username: 'alice', id: `gid://gitlab/User/${alice.id}`, webUrl: 'http://kiln.test/alice', state: 'active',
    } } });
    const get = await t.request({ method: 'GET', url: `/api/graphql?query=${encodeURIComponent('{ currentUser { username } }')}`, token: readApiToken });
    assert.deepEqual(get.json(), { data: { currentUser: { username: 'alice' } } });
    const anonymous = await gql('{ currentUser { username } }');
    assert.deepEqual(anonymous.json(), { data: { currentUser: null } });
  });

  it('takes variables and operationName, as JSON or as text', async () => {
    const q = 'query One($u: String!) { user(username: $u) { username } } query Two { currentUser { id } }';
    const res = await t.request({ method: 'POST', url: '/api/graphql', token: aliceToken, payload: { query: q, variables: JSON.stringify({ u: 'bob' }), operationName: 'One' } });
    assert.deepEqual(res.json(), { data: { user: { username: 'bob' } } });
  });

  it('refuses bad credentials in the GraphQL shape with the Service messages', async () => {
    const bad = await gql('{ currentUser { username } }', { token: 'nope-not-a-token' });
    assert.deepEqual([bad.statusCode, bad.json()], [401, { errors: [{ message: 'Invalid token' }] }]);
    const readUser = await createToken(t.db, alice, { scopes: ['read_user'] });
    const scoped = await gql('{ currentUser { username } }', { token: readUser });
    assert.deepEqual([scoped.statusCode, scoped.json()], [401, { errors: [{ message: 'Invalid token' }] }]);
    const blocked = await createUser(t.db, { state: 'blocked' });
    const blockedRes = await gql('{ currentUser { username } }', { token: await createToken(t.db, blocked) });
    assert.deepEqual([blockedRes.statusCode, blockedRes.json()], [403, { errors: [{ message: 'API not accessible for user' }] }]);
  });

  it('accepts OAuth tokens with api or read_api, and an empty query gets the Service message', async () => {
    const oauth = await createOauthToken(t.db, alice, { scopes: ['read_api'] });
    const res = await t.request({ method: 'POST', url: '/api/graphql', headers: { authorization: `Bearer ${oauth}` }, payload: { query: '{ currentUser { username } }' } });
    assert.deepEqual(res.json(), { data: { currentUser: { username: 'alice' } } });
    const m = await t.request({ method: 'POST', url: '/api/graphql', headers: { authorization: `Bearer ${oauth}` }, payload: { query: 'mutation { echoCreate(input: {}) { errors } }' } });
    assert.deepEqual(m.json().data, { echoCreate: null });
    const empty = await gql('', { token: aliceToken });
    assert.deepEqual([empty.statusCode, empty.json()], [200, { errors: [{ message: 'No query string was present' }] }]);
  });

  it('answers a batch of queries in order, the size limit counting them together', async () => {
    const res = await t.request({ method: 'POST', url: '/api/graphql', token: aliceToken, payload: [
      { query: '{ currentUser { username } }' },
      { query: 'query U($u: String!) { user(username: $u) { name } }', variables: { u: 'bob' }, operationName: 'U' },
      { query: '{ nope }' },
    ] });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), [
      { data: { currentUser: { username: 'alice' } } },
      { data: { user: { name: 'Bob' } } },
      { errors: [{ message: "Field 'nope' doesn't exist on type 'Query'", locations: [{ line: 1, column: 3 }] }] },
    ]);
    const half = `{ currentUser { username } } # ${'x'.repeat(5_000)}`;
    const big = await t.request({ method: 'POST', url: '/api/graphql', token: aliceToken, payload: [{ query: half }, { query: half }] });
    assert.deepEqual([big.statusCode, big.json()], [422, { errors: [{ message: 'Query too large' }] }]);
  });

  it('answers syntax and validation errors with locations, and unknown fields by name', async () => {
    const syntax = await gql('{ currentUser { username ', { token: aliceToken });
    assert.equal(syntax.statusCode, 200);
    assert.match(syntax.json().errors[0].message, /Syntax Error/);
    assert.deepEqual(syntax.json().errors[0].locations, [{ line: 1, column: 26 }]);
    const unknown = await gql('{ currentUser { nope } }', { token: aliceToken });
    assert.equal(unknown.json().errors[0].message, "Field 'nope' doesn't exist on type 'UserCore'");
    const many = await gql(`{ ${Array.from({ length: 8 }, (_, i) => `f${i}: nope${i}`).join(' ')} }`, { token: aliceToken });
    assert.equal(many.json().errors.length, 5);
    const missing = await gql('{ project { name } }', { token: aliceToken });
    assert.equal(missing.json().errors[0].message, "Field 'project' is missing required arguments: fullPath");
    assert.equal(unknown.json().data, undefined);
  });

  it('limits query size, depth and complexity with the Service messages', async () => {
    const big = await gql(`{ currentUser { username } } # ${'x'.repeat(10_000)}`, { token: aliceToken });
    assert.deepEqual([big.statusCode, big.json()], [422, { errors: [{ message: 'Query too large' }] }]);
    let deep = 'username';
    for (let i = 0; i < 8; i += 1) deep = `groupMemberships { nodes { user { ${deep} } } }`;
    const depth = await gql(`{ currentUser { ${deep} } }`, { token: aliceToken });
    assert.equal(depth.statusCode, 200);
    assert.match(depth.json().errors[0].message, /^Query has depth of \d+, which exceeds max depth of 15$/);
    const fields = Array.from({ length: 210 }, (_, i) => `a${i}: username`).join(' ');
    const anonymous = await gql(`{ user(username: "bob") { ${fields} } }`);
    assert.deepEqual(anonymous.json(), { errors: [{ message: 'Query has complexity of 211, which exceeds max complexity of 200' }] });
    const signedIn = await gql(`{ user(username: "bob") { ${fields} } }`, { token: aliceToken });
    assert.equal(signedIn.json().data.user.a0, 'bob');
    const over = Array.from({ length: 260 }, (_, i) => `a${i}: username`).join(' ');
    const limited = await gql(`{ user(username: "bob") { ${over} } }`, { token: aliceToken });
    assert.deepEqual(limited.json(), { errors: [{ message: 'Query has complexity of 261, which exceeds max complexity of 250' }] });
    const admin = await createAdmin(t.db);
    const adminRes = await gql(`{ user(username: "bob") { ${over} } }`, { token: await createToken(t.db, admin) });
    assert.equal(adminRes.json().data.user.a1, 'bob');
    // GraphiQL's introspection reads only the schema: let through past the anonymous limit.
    const schema = await gql(getIntrospectionQuery());
    assert.equal(schema.json().data.__schema.queryType.name, 'Query');
    const score = await gql('{ queryComplexity { limit score } currentUser { username } }', { token: aliceToken });
    assert.deepEqual(score.json().data.queryComplexity, { limit: 250, score: 5 });
  });

  it('lets read_api tokens query only; mutations need api, and never over GET', async () => {
    const m = 'mutation { echoCreate(input: { messages: ["hi"] }) { echoes errors } }';
    const read = await gql(m, { token: readApiToken });
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.json().data, { echoCreate: null });
    assert.equal(read.json().errors[0].message, "The resource that you are attempting to access does not exist or you don't have permission to perform this action");
    const write = await gql(m, { token: aliceToken });
    assert.deepEqual(write.json(), { data: { echoCreate: { echoes: ['hi'], errors: [] } } });
    const viaGet = await t.request({ method: 'GET', url: `/api/graphql?query=${encodeURIComponent(m)}`, token: aliceToken });
    assert.deepEqual([viaGet.statusCode, viaGet.json()], [422, { errors: [{ message: 'Mutations are forbidden in GET requests' }] }]);
  });

  it('uses a session cookie for queries, and for mutations only with its CSRF token', async () => {
    const session = await createSession(t.db, alice);
    const cookie = `_service_session=${session}`;
    const read = await t.request({ method: 'GET', url: `/api/graphql?query=${encodeURIComponent('{ currentUser { username } }')}`, headers: { cookie } });
    assert.deepEqual(read.json(), { data: { currentUser: { username: 'alice' } } });
    // A POST without the token is anonymous even for a query (the Service's null_session).
    const post = await gql('{ currentUser { username } }', { headers: { cookie } });
    assert.deepEqual(post.json(), { data: { currentUser: null } });
    const m = 'mutation { echoCreate(input: { messages: ["x"] }) { echoes } }';
    // Without the token the session does not count (the Service's null_session): anonymous.
    const noCsrf = await gql(`${m}`, { headers: { cookie } });
    assert.deepEqual(noCsrf.json().data, { echoCreate: null });
    const withCsrf = await gql(m, { headers: { cookie, 'x-csrf-token': csrfTokenFor(t.app.kiln.secretKeyBase, session) } });
    assert.deepEqual(withCsrf.json(), { data: { echoCreate: { echoes: ['x'] } } });
  });

  it('finds users by id, username, ids and usernames, with admin-only and self-only fields', async () => {
    const byId = await gql(`{ user(id: "gid://gitlab/User/${bob.id}") { username namespace { fullPath id } } }`, { token: aliceToken });
    assert.deepEqual(byId.json().data.user.username, 'bob');
    assert.equal(byId.json().data.user.namespace.fullPath, 'bob');
    assert.match(byId.json().data.user.namespace.id, /^gid:\/\/gitlab\/Namespaces::UserNamespace\/\d+$/);
    const wrongType = await gql('{ user(id: "gid://gitlab/Project/1") { username } }', { token: aliceToken });
    assert.match(wrongType.json().errors[0].message, /does not represent an instance of User/);
    const both = await gql(`{ user(id: "gid://gitlab/User/${bob.id}", username: "bob") { username } }`, { token: aliceToken });
    assert.equal(both.json().errors[0].message, 'Provide either a single username or id');
    // doc/api/graphql/reference: users(usernames:) with a connection.
    const list = await gql('{ users(usernames: ["alice", "BOB"], sort: created_asc) { count nodes { username } pageInfo { hasNextPage } } }', { token: aliceToken });
    assert.deepEqual(list.json().data.users, { count: 2, nodes: [{ username: 'alice' }, { username: 'bob' }], pageInfo: { hasNextPage: false } });
    // doc/api/graphql/users_example.md, as written there.
    const example = await gql(`{
      users(usernames: ["alice", "bob", "nobody"]) {
        pageInfo {
          endCursor
          startCursor
          hasNextPage
        }
        nodes {
          id
          username,
          publicEmail
          location
          webUrl
          userPermissions {
            createSnippet
          }
        }
      }
    }`, { token: aliceToken });
    assert.equal(example.statusCode, 200, example.body);
    assert.deepEqual(example.json().data.users.nodes.map((u: { username: string }) => u.username).sort(), ['alice', 'bob']);
    assert.deepEqual(example.json().data.users.nodes[0].userPermissions, { createSnippet: true });
    assert.equal(example.json().data.users.pageInfo.hasNextPage, false);
    const ids = await gql(`{ users(ids: ["gid://gitlab/User/${bob.id}"]) { nodes { username } } }`, { token: aliceToken });
    assert.deepEqual(ids.json().data.users.nodes, [{ username: 'bob' }]);
    const search = await gql('{ users(search: "liddell") { nodes { username } } }', { token: aliceToken });
    assert.deepEqual(search.json().data.users.nodes, [{ username: 'alice' }]);
    await t.db.insertInto('emails').values({ user_id: bob.id, email: 'bob2@example.com', confirmed_at: null, created_at: new Date().toISOString(), updated_at: new Date().toISOString() }).execute();
    const q = `{ user(username: "bob") { emails { nodes { email } } groupMemberships { nodes { id } } } }`;
    assert.deepEqual((await gql(q, { token: aliceToken })).json().data.user, { emails: null, groupMemberships: null });
    assert.deepEqual((await gql(q, { token: bobToken })).json().data.user.emails, { nodes: [{ email: 'bob2@example.com' }] });
    assert.deepEqual((await gql(q, { token: ROOT_TOKEN })).json().data.user.emails, { nodes: [{ email: 'bob2@example.com' }] });
    const anonymous = await gql('{ users { nodes { username } } }');
    assert.deepEqual(anonymous.json().data, { users: null });
    assert.equal(anonymous.json().errors[0].message, "The resource that you are attempting to access does not exist or you don't have permission to perform this action");
    const anonymousByName = await gql('{ users(usernames: ["bob"]) { nodes { username } } }');
    assert.deepEqual(anonymousByName.json().data.users.nodes, [{ username: 'bob' }]);
    const admins = await gql('{ users(admins: true) { nodes { username } } }', { token: ROOT_TOKEN });
    assert.ok(admins.json().data.users.nodes.some((u: { username: string }) => u.username === 'root'));
    assert.ok(!admins.json().data.users.nodes.some((u: { username: string }) => u.username === 'alice'));
  });

  it('refuses NUL bytes, long strings and ids past 2^31 before the database, on both engines', async () => {
    const nul = await gql('query($u: String!) { user(username: $u) { id } }', { token: aliceToken, variables: { u: 'a\u0000b' } });
    assert.deepEqual(nul.json(), { data: { user: null }, errors: [{ message: 'username must not contain NUL bytes', locations: [{ line: 1, column: 22 }], path: ['user'] }] });
    const long = await gql('query($p: ID!) { project(fullPath: $p) { id } }', { token: aliceToken, variables: { p: `a/${'x'.repeat(1_000_000)}` } });
    assert.equal(long.statusCode, 200);
    assert.equal(long.json().errors[0].message, 'fullPath is too long (maximum is 5120 characters)');
    const search = await gql('query($s: String) { users(search: $s) { nodes { id } } }', { token: aliceToken, variables: { s: 'x\u0000' } });
    assert.equal(search.json().errors[0].message, 'search must not contain NUL bytes');
    const big = await gql('{ user(id: "gid://gitlab/User/2147483648") { id } }', { token: aliceToken });
    assert.match(big.json().errors[0].message, /is not a valid Global ID/);
    const group = await gql('query($p: ID!) { group(fullPath: $p) { id } }', { token: aliceToken, variables: { p: 'g\u0000' } });
    assert.equal(group.json().errors[0].message, 'fullPath must not contain NUL bytes');
  });

  it('pages users with Relay cursors both ways, at most 100 a page', async () => {
    for (let i = 0; i < 5; i += 1) await createUser(t.db, { username: `pager${i}` });
    const first = await gql('{ users(search: "pager", first: 2, sort: created_asc) { edges { cursor node { username } } pageInfo { hasNextPage hasPreviousPage endCursor startCursor } } }', { token: aliceToken });
    const c = first.json().data.users;
    assert.deepEqual(c.edges.map((e: { node: { username: string } }) => e.node.username), ['pager0', 'pager1']);
    assert.deepEqual([c.pageInfo.hasNextPage, c.pageInfo.hasPreviousPage], [true, false]);
    assert.deepEqual(JSON.parse(Buffer.from(c.pageInfo.endCursor, 'base64').toString()), { id: String(c.edges[1].node && (await t.db.selectFrom('users').select('id').where('username', '=', 'pager1').executeTakeFirstOrThrow()).id) });
    const next = await gql(`{ users(search: "pager", first: 2, after: "${c.pageInfo.endCursor}", sort: created_asc) { nodes { username } pageInfo { hasPreviousPage } } }`, { token: aliceToken });
    assert.deepEqual(next.json().data.users.nodes.map((u: { username: string }) => u.username), ['pager2', 'pager3']);
    assert.equal(next.json().data.users.pageInfo.hasPreviousPage, true);
    const last = await gql('{ users(search: "pager", last: 2, sort: created_asc) { nodes { username } pageInfo { hasPreviousPage hasNextPage } } }', { token: aliceToken });
    assert.deepEqual(last.json().data.users.nodes.map((u: { username: string }) => u.username), ['pager3', 'pager4']);
    assert.deepEqual(last.json().data.users.pageInfo, { hasPreviousPage: true, hasNextPage: false });
    const bad = await gql('{ users(after: "!!") { nodes { username } } }', { token: aliceToken });
    assert.equal(bad.json().errors[0].message, 'Please provide a valid cursor for `after`');
  });

  it('shows a user status as UserStatus', async () => {
    await t.request({ method: 'PUT', url: '/api/v4/user/status', token: aliceToken, payload: { emoji: 'coffee', message: 'Busy :coffee:', availability: 'busy' } });
    const res = await gql('{ currentUser { status { emoji message availability messageHtml } } }', { token: aliceToken });
    const s = res.json().data.currentUser.status;
    assert.deepEqual([s.emoji, s.message, s.availability], ['coffee', 'Busy :coffee:', 'BUSY']);
    assert.match(s.messageHtml, /Busy/);
  });

  it('finds groups by full path with their projects, hiding private ones from strangers', async () => {
    const g = await t.request({ method: 'POST', url: '/api/v4/groups', token: aliceToken, payload: { name: 'Wonder', path: 'wonder', visibility: 'private' } });
    assert.equal(g.statusCode, 201, g.body);
    const p = await t.request({ method: 'POST', url: '/api/v4/projects', token: aliceToken, payload: { name: 'Rabbit', namespace_id: g.json().id } });
    assert.equal(p.statusCode, 201, p.body);
    // doc/api/graphql/reference: Query.group with projects.
    const q = '{ group(fullPath: "wonder") { id name fullPath visibility webUrl projects { count nodes { name fullPath nameWithNamespace } } } }';
    const own = await gql(q, { token: aliceToken });
    assert.deepEqual(own.json().data.group, {
      id: `gid://gitlab/Group/${g.json().id}`, name: 'Wonder', fullPath: 'wonder', visibility: 'private', webUrl: 'http://kiln.test/groups/wonder',
      projects: { count: 1, nodes: [{ name: 'Rabbit', fullPath: 'wonder/rabbit', nameWithNamespace: 'Wonder / Rabbit' }] },
    });
    assert.deepEqual((await gql(q, { token: bobToken })).json(), { data: { group: null } });
    assert.deepEqual((await gql('{ project(fullPath: "wonder/rabbit") { name } }', { token: bobToken })).json(), { data: { project: null } });
    const visible = await gql(`{ projects(ids: ["gid://gitlab/Project/${p.json().id}"]) { nodes { fullPath } } }`, { token: aliceToken });
    assert.deepEqual(visible.json().data.projects.nodes, [{ fullPath: 'wonder/rabbit' }]);
    const hidden = await gql(`{ projects(ids: ["gid://gitlab/Project/${p.json().id}"]) { nodes { fullPath } } }`, { token: bobToken });
    assert.deepEqual(hidden.json().data.projects.nodes, []);
    const member = await gql('{ projects(membership: true, search: "rabb") { nodes { name } } }', { token: aliceToken });
    assert.deepEqual(member.json().data.projects.nodes, [{ name: 'Rabbit' }]);
    const mine = await gql('{ currentUser { groupCount groupMemberships { nodes { accessLevel { integerValue stringValue } group { fullPath } } } } }', { token: aliceToken });
    assert.deepEqual(mine.json().data.currentUser, { groupCount: 1, groupMemberships: { nodes: [{ accessLevel: { integerValue: 50, stringValue: 'OWNER' }, group: { fullPath: 'wonder' } }] } });
  });

  it('serves the explorer page and its assets locally, under a strict CSP', async () => {
    const page = await t.request({ method: 'GET', url: '/-/graphql-explorer' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
    assert.doesNotMatch(page.body, /https?:\/\//);
    for (const asset of ['react.js', 'react-dom.js', 'graphiql.js', 'graphiql.css', 'start.js']) {
      const a = await t.request({ method: 'GET', url: `/-/graphql-explorer/assets/${asset}` });
      assert.equal(a.statusCode, 200, asset);
    }
    assert.equal((await t.request({ method: 'GET', url: '/-/graphql-explorer/assets/nope.js' })).statusCode, 404);
  });
});
