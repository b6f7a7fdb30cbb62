/**
 * Project uploads (issue 32, item 4; POST /projects/:id/uploads of the Service 15.2, python-gitlab's
 * test_project_file_uploads and the CLI's `project upload`): the ProjectUpload answer, sanitised
 * names, embedded images, the max_attachment_size bound, and the file served back at
 * `/<namespace>/<project>/uploads/<secret>/<filename>` with the project's visibility.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { startTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createPeople, createProject, type People } from '../helpers/noteables.ts';

function multipart(file: { filename: string; content: Buffer | string }, field = 'file') {
  const boundary = `----kiln${Math.random().toString(16).slice(2)}`;
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${file.filename}"\r\n`
      + 'Content-Type: application/octet-stream\r\n\r\n'),
    Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('project uploads', () => {
  let t: TestApp;
  let people: People;
  let project: number;
  let fullPath = '';
  const upload = (file: { filename: string; content: Buffer | string }, token = people.tokens.guest, id = project) =>
    t.request({ method: 'POST', url: `/api/v4/projects/${id}/uploads`, token, ...multipart(file) });

  before(async () => {
    t = await startTestApp();
    people = await createPeople(t);
    project = await createProject(t, people);
    fullPath = (await t.request({ method: 'GET', url: `/api/v4/projects/${project}`, token: people.tokens.owner })).json().path_with_namespace;
  });
  after(async () => { await t.close(); });

  it('stores a file and answers ProjectUpload (python-gitlab test_project_file_uploads)', async () => {
    const res = await upload({ filename: 'test.txt', content: 'testing contents' });
    assert.equal(res.statusCode, 201, res.body);
    const u = res.json();
    assert.deepEqual(Object.keys(u), ['alt', 'url', 'full_path', 'markdown']);
    assert.equal(u.alt, 'test.txt');
    assert.match(u.url, /^\/uploads\/[0-9a-f]{32}\/test\.txt$/);
    assert.equal(u.full_path, `/${fullPath}${u.url}`);
    assert.equal(u.markdown, `[test.txt](${u.url})`);
    const row = await t.db.selectFrom('project_uploads').selectAll().where('project_id', '=', project).executeTakeFirstOrThrow();
    assert.equal(row.size, 16);
    assert.equal(row.uploaded_by_id, people.users.guest.id);

    const got = await t.request({ method: 'GET', url: u.full_path, token: people.tokens.reporter });
    assert.equal(got.statusCode, 200, got.body);
    assert.equal(got.body, 'testing contents');
    assert.match(String(got.headers['content-disposition']), /^attachment;/);
  });

  it('embeds images, names them without extension and sanitises names', async () => {
    const res = await upload({ filename: '../My Shot (2).PNG', content: Buffer.from([0x89, 0x50]) });
    assert.equal(res.statusCode, 201, res.body);
    const u = res.json();
    assert.equal(u.alt, 'My_Shot__2_');
    assert.match(u.url, /^\/uploads\/[0-9a-f]{32}\/My_Shot__2_\.PNG$/);
    assert.equal(u.markdown, `![My_Shot__2_](${u.url})`);
  });

  it('hides a private project’s files from those who may not see it', async () => {
    const u = (await upload({ filename: 'secret.txt', content: 'hidden' })).json();
    const image = (await upload({ filename: 'pic.png', content: 'img' })).json();
    for (const url of [u.full_path, image.full_path]) {
      assert.equal((await t.request({ method: 'GET', url })).statusCode, 404);
      assert.equal((await t.request({ method: 'GET', url, token: people.tokens.nonMember })).statusCode, 404);
      assert.equal((await t.request({ method: 'GET', url, token: ROOT_TOKEN })).statusCode, 200);
    }
    const outsider = await upload({ filename: 'x.txt', content: 'x' }, people.tokens.nonMember);
    assert.equal(outsider.statusCode, 404);
    assert.deepEqual(outsider.json(), { message: '404 Project Not Found' });
    const anonymous = await t.request({ method: 'POST', url: `/api/v4/projects/${project}/uploads`, ...multipart({ filename: 'a', content: 'a' }) });
    assert.equal(anonymous.statusCode, 401);
    // A wrong secret or name finds nothing.
    assert.equal((await t.request({ method: 'GET', url: u.full_path.replace('secret.txt', 'other.txt'), token: ROOT_TOKEN })).statusCode, 404);
    assert.equal((await t.request({ method: 'GET', url: `/${fullPath}/uploads/${'0'.repeat(32)}/secret.txt`, token: ROOT_TOKEN })).statusCode, 404);
  });

  it('serves a public project’s files to anyone', async () => {
    const open = await createProject(t, people, 'public');
    const u = (await upload({ filename: 'open.txt', content: 'for all' }, people.tokens.nonMember, open)).json();
    const got = await t.request({ method: 'GET', url: u.full_path });
    assert.equal(got.statusCode, 200, got.body);
    assert.equal(got.body, 'for all');
  });

  it('refuses a file past max_attachment_size and a request without a file', async () => {
    const set = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { max_attachment_size: 1 } });
    assert.equal(set.statusCode, 200, set.body);
    const big = await upload({ filename: 'big.bin', content: Buffer.alloc(1024 * 1024 + 1) });
    assert.equal(big.statusCode, 413);
    const fits = await upload({ filename: 'fits.bin', content: Buffer.alloc(1024 * 1024) });
    assert.equal(fits.statusCode, 201, fits.body);
    // The setting is the bound, above the buffered forms' 10 MiB too.
    const raised = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { max_attachment_size: 12 } });
    assert.equal(raised.statusCode, 200, raised.body);
    const large = await upload({ filename: 'large.bin', content: Buffer.alloc(11 * 1024 * 1024, 1) });
    assert.equal(large.statusCode, 201, large.body);
    const none = await t.request({ method: 'POST', url: `/api/v4/projects/${project}/uploads`, token: people.tokens.guest, payload: {} });
    assert.equal(none.statusCode, 400);
    assert.deepEqual(none.json(), { message: '400 Bad request - "file" not given' });
  });

  it('removes the files with their project', async () => {
    const dir = path.join(t.dataDir, 'uploads', 'project', String(project));
    assert.ok((await fs.stat(dir)).isDirectory());
    const del = await t.request({ method: 'DELETE', url: `/api/v4/projects/${project}`, token: people.tokens.owner });
    assert.equal(del.statusCode, 202, del.body);
    await assert.rejects(fs.stat(dir));
    assert.equal((await t.db.selectFrom('project_uploads').selectAll().where('project_id', '=', project).execute()).length, 0);
  });
});
