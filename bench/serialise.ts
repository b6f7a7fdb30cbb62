/**
 * What writing a list answer costs, in process, median of 9 rounds (the figures README's
 * Performance section and the comments of `flat`, `flatWords` and `rowMaker` quote):
 *
 * - 20 users as an administrator's list presents them (UserWithAdmin), written by JSON.stringify
 *   with the presenter's flat strings, and with web_url and work_information built by template
 *   literals (ropes, which send the whole answer off V8's fast path);
 * - one user as GET /users/:id answers it (User), written by JSON.stringify and by its schema's
 *   fast-json-stringify serialiser;
 * - 20 jobs tagged `docker-privileged linux-amd64-large`, tag lists made by flatWords and by split;
 * - 21 users of 39 columns read from PostgreSQL's JSON: as objects (`json_agg(q)`) and as arrays
 *   made into rows by rowMaker (`json_agg(json_build_array(…))`).
 *
 *   node bench/serialise.ts
 */
import { rowMaker } from '../src/db/prepared.ts';
import { compileSerializer, flatWords } from '../src/http/entities/serializers.ts';
import { presentUser, presentUserWithAdmin, UserSchema, type UserEntityRow } from '../src/http/entities/user.ts';

function median(fn: () => unknown, runs = 2_000): number {
  for (let i = 0; i < runs; i++) fn();
  const rounds: number[] = [];
  for (let r = 0; r < 9; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < runs; i++) fn();
    rounds.push(Number(process.hrtime.bigint() - start) / 1_000 / runs);
  }
  return rounds.sort((a, b) => a - b)[4];
}

function line(what: string, a: [string, number], b: [string, number]): void {
  process.stdout.write(
    `${what}\n  ${a[0].padEnd(34)} ${a[1].toFixed(1).padStart(7)} µs\n  ${b[0].padEnd(34)} ${b[1].toFixed(1).padStart(7)} µs   `
    + `(${(b[1] / a[1]).toFixed(2)}×)\n`,
  );
}

// Rows as they come from the database: fresh, flat strings (a JSON.parse of the text makes them so).
const userRows = (): UserEntityRow[] => JSON.parse(JSON.stringify(Array.from({ length: 20 }, (_, i) => ({
  id: 10_000 - i, username: `bench${9_999 - i}`, name: `Bench User ${9_999 - i}`, state: 'active', avatar: null,
  bio: 'Seeded for benchmarks',
  location: '', public_email: null, skype: '', linkedin: '', twitter: '', discord: '', website_url: '', organization: 'kiln',
  job_title: 'Engineer', pronouns: null, timezone: null, private_profile: 0, created_at: '2026-01-01T02:46:39.000Z',
  last_sign_in_at: null, confirmed_at: '2026-01-01T02:46:39.000Z', last_activity_on: null, email: `bench${9_999 - i}@example.com`,
  theme_id: 1, color_scheme_id: 1, projects_limit: 100_000, current_sign_in_at: null, can_create_group: 1,
  otp_required_for_login: 0, external: 0, commit_email: null, admin: 0, note: null, user_type: null,
})))) as UserEntityRow[];

// The fixtures are parsed anew for every run (strings fresh from a database are fresh every
// time); the time that takes is measured on its own and taken off both figures.
const usersFixture = median(() => userRows());
const o = { externalUrl: 'http://kiln.bench', canReadProfile: true };
const extras = { followers: 0, following: 0, isFollowed: false, identities: [], namespaceId: 1 };
const presented = () => userRows().map((u) => presentUserWithAdmin(u, extras, o));
line('20 users (UserWithAdmin), presented and written by JSON.stringify',
  ['flat strings (flat)', median(() => JSON.stringify(presented())) - usersFixture],
  ['ropes (template literals)', median(() => JSON.stringify(presented().map((u) => Object.assign(u, {
    web_url: `${o.externalUrl}/${u.username}`, work_information: `${u.job_title} at ${u.organization}`,
  })))) - usersFixture]);

// compileSerializer of the unmarked schema is fast-json-stringify's, as single users were written before.
const bySchema = compileSerializer({ ...UserSchema });
const oneUser = userRows()[0];
line('one user (User), presented and written',
  ['JSON.stringify (exactJson)', median(() => JSON.stringify(presentUser(oneUser, extras, o)), 20_000)],
  ["its schema's serialiser", median(() => bySchema(presentUser(oneUser, extras, o)), 20_000)]);

const jobs = () => JSON.parse(JSON.stringify(Array.from({ length: 20 }, (_, i) => ({
  id: i, name: `job name number ${i}`, log: 'x'.repeat(1_400), status: 'success', tag_list: `docker-privileged linux-amd64-large ${i}`,
})))) as { tag_list: string }[];
const jobsFixture = median(() => jobs());
line('20 jobs (30 KB) tagged docker-privileged linux-amd64-large, tag lists made and written',
  ['flatWords', median(() => JSON.stringify(jobs().map((j) => ({ ...j, tag_list: flatWords(j.tag_list) })))) - jobsFixture],
  ['split', median(() => JSON.stringify(jobs().map((j) => ({ ...j, tag_list: j.tag_list.split(' ') })))) - jobsFixture]);

const columns = Object.keys(userRows()[0]).concat(['followers', 'following', 'is_followed', 'namespace_id', 'identities']);
const rows = userRows().concat(userRows()[0]).map(
  (u) => ({ ...u, followers: 0, following: 0, is_followed: 0, namespace_id: u.id + 1, identities: [] }),
) as Record<string, unknown>[];
const asObjects = JSON.stringify(rows);
const asArrays = JSON.stringify(rows.map((r) => columns.map((c) => r[c])));
const make = rowMaker(columns)!;
line(`21 users of ${columns.length} columns read from PostgreSQL's JSON (${asObjects.length} and ${asArrays.length} bytes)`,
  ['arrays made into rows (rowMaker)', median(() => (JSON.parse(asArrays) as unknown[][]).map(make))],
  ['objects (JSON.parse)', median(() => JSON.parse(asObjects))]);
