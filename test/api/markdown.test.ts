/**
 * POST /markdown (lib/api/markdown.rb, doc/api/markdown.md): the Service's rendering of GitLab
 * Flavored Markdown, references linked only where the caller may see them, and a sanitiser that
 * leaves no executable vector (an OWASP-style corpus in test/fixtures/markdown/xss.txt).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'htmlparser2';
import { Element, hasChildren, type AnyNode } from 'domhandler';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

const NOW = '2026-11-27T10:00:00.000Z';

describe('POST /markdown', () => {
  let t: TestApp;
  let owner: UserRow;
  let ownerToken: string;
  let reporterToken: string;
  let strangerToken: string;
  let author: UserRow;
  let authorToken: string;
  let projectId: number;
  let privateProjectId: number;
  let groupId: number;

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db, { username: 'owner', name: 'Olga Owner' });
    ownerToken = await createToken(t.db, owner);
    const reporter = await createUser(t.db, { username: 'reporter' });
    reporterToken = await createToken(t.db, reporter);
    strangerToken = await createToken(t.db, await createUser(t.db, { username: 'stranger' }));
    author = await createUser(t.db, { username: 'author' });
    authorToken = await createToken(t.db, author);
    await createUser(t.db, { username: 'blocked', state: 'blocked' });

    const group = await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name: 'Acme', path: 'acme', visibility: 'public' } });
    assert.equal(group.statusCode, 201, group.body);
    groupId = group.json().id;
    const project = await t.request({
      method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'app', namespace_id: groupId, visibility: 'public' },
    });
    assert.equal(project.statusCode, 201, project.body);
    projectId = project.json().id;
    const secret = await t.request({
      method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'secret', namespace_id: groupId, visibility: 'private' },
    });
    assert.equal(secret.statusCode, 201, secret.body);
    privateProjectId = secret.json().id;
    const member = await t.request({
      method: 'POST', url: `/api/v4/projects/${projectId}/members`, token: ownerToken, payload: { user_id: reporter.id, access_level: 20 },
    });
    assert.equal(member.statusCode, 201, member.body);

    const issue = (iid: number, project: number, title: string, confidential = 0) => ({
      iid, project_id: project, author_id: author.id, title, state: 'opened', confidential: confidential as 0 | 1,
      created_at: NOW, updated_at: NOW,
    });
    await t.db.insertInto('issues').values([
      issue(1, projectId, 'First issue'),
      issue(2, projectId, 'Hidden issue', 1),
      issue(1, privateProjectId, 'Private issue'),
    ]).execute();
    const label = (title: string, color: string, owner: { project_id: number } | { group_id: number }) => ({
      title, color, description: `about ${title}`, created_at: NOW, updated_at: NOW, ...owner,
    });
    await t.db.insertInto('labels').values([
      label('bug', '#ff0000', { project_id: projectId }),
      label('two words', '#eeeeee', { project_id: projectId }),
      label('team', '#428bca', { group_id: groupId }),
      label('bug', '#00ff00', { group_id: groupId }),
      label('secret-label', '#000000', { project_id: privateProjectId }),
    ]).execute();
    const milestone = (iid: number, title: string, owner: { project_id: number } | { group_id: number }) => ({
      iid, title, state: 'active', created_at: NOW, updated_at: NOW, ...owner,
    });
    await t.db.insertInto('milestones').values([
      milestone(1, 'v1.0', { project_id: projectId }),
      milestone(2, 'big release', { project_id: projectId }),
      milestone(1, 'Q4', { group_id: groupId }),
    ]).execute();
  });
  after(async () => { await t.close(); });

  const render = (payload: Record<string, unknown>, token?: string) =>
    t.request({ method: 'POST', url: '/api/v4/markdown', token, payload });
  async function html(payload: Record<string, unknown>, token?: string): Promise<string> {
    const res = await render(payload, token);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(Object.keys(res.json()), ['html']);
    return res.json().html;
  }

  it('renders the documented example with 201, anonymously too (authentication became required only in 15.3)', async () => {
    const expected = '<p dir="auto">Hello world! <gl-emoji title="party popper" data-name="tada" data-unicode-version="6.0">🎉</gl-emoji></p>';
    assert.equal(await html({ text: 'Hello world! :tada:', gfm: true, project: 'acme/app' }, ownerToken), expected);
    assert.equal(await html({ text: 'Hello world! :tada:', gfm: true }), expected);
    // form-encoded with gfm as a string, as curl --data sends it
    const form = await t.request({
      method: 'POST', url: '/api/v4/markdown', token: ownerToken,
      headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'text=%3Atada%3A&gfm=true',
    });
    assert.equal(form.statusCode, 201, form.body);
    assert.match(form.json().html, /<gl-emoji /);
    // allow_access_with_scope :read_api — a read-only token may render.
    const readApi = await createToken(t.db, owner, { scopes: ['read_api'] });
    assert.equal((await render({ text: 'x' }, readApi)).statusCode, 201);
    const readUser = await createToken(t.db, owner, { scopes: ['read_user'] });
    assert.equal((await render({ text: 'x' }, readUser)).statusCode, 403);
  });

  it('validates its parameters', async () => {
    assert.deepEqual((await render({ gfm: true }, ownerToken)).json(), { message: '400 Bad request - "text" not given' });
    const long = await render({ text: 'a'.repeat(1_048_577) }, ownerToken);
    assert.equal(long.statusCode, 400, long.body);
    assert.equal((await render({ text: 'a'.repeat(1_048_576 - 1) }, ownerToken)).statusCode, 201);
    assert.equal((await render({ text: 'x', gfm: 'maybe' }, ownerToken)).statusCode, 400);
    // requires :text takes an empty text (Grape checks presence, not blankness).
    assert.deepEqual((await render({ text: '' }, ownerToken)).json(), { html: '' });
  });

  it('answers 404 Project Not Found for a missing project and one the caller may not read', async () => {
    const notFound = { message: '404 Project Not Found' };
    assert.deepEqual((await render({ text: 'x', project: 'acme/nothing' }, ownerToken)).json(), notFound);
    assert.deepEqual((await render({ text: 'x', project: 'acme/secret' }, strangerToken)).json(), notFound);
    assert.deepEqual((await render({ text: 'x', project: 'acme/secret' })).json(), notFound);
    // find_by_full_path: an id names no project
    assert.deepEqual((await render({ text: 'x', project: String(projectId) }, ownerToken)).json(), notFound);
    assert.equal((await render({ text: 'x', project: 'acme/secret' }, ownerToken)).statusCode, 201);
    assert.equal((await render({ text: 'x', project: 'ACME/App' }, strangerToken)).statusCode, 201);
  });

  it('renders GitLab Flavored Markdown as the Service does', async () => {
    const gfm = (text: string) => html({ text, gfm: true }, ownerToken);
    // Heading anchors (glfm_specification example 04_02 atx headings 001): repeated ids count up.
    assert.equal(await gfm('# foo\n## foo\n### Foo bar: *baz*!'), [
      '<h1 dir="auto"><a id="user-content-foo" class="anchor" href="#foo" aria-hidden="true"></a>foo</h1>',
      '<h2 dir="auto"><a id="user-content-foo-1" class="anchor" href="#foo-1" aria-hidden="true"></a>foo</h2>',
      '<h3 dir="auto"><a id="user-content-foo-bar-baz" class="anchor" href="#foo-bar-baz" aria-hidden="true"></a>Foo bar: <em>baz</em>!</h3>',
    ].join('\n'));
    // Task lists: disabled checkboxes in place of the markers.
    assert.equal(await gfm('- [ ] todo\n- [x] done\n- [X] also\n- plain'), [
      '<ul class="task-list" dir="auto">',
      '<li class="task-list-item"><input type="checkbox" class="task-list-item-checkbox" disabled> todo</li>',
      '<li class="task-list-item"><input type="checkbox" class="task-list-item-checkbox" checked disabled> done</li>',
      '<li class="task-list-item"><input type="checkbox" class="task-list-item-checkbox" checked disabled> also</li>',
      '<li>plain</li>',
      '</ul>',
    ].join('\n'));
    assert.match(await gfm('1. [ ] first\n\n2. [x] second'), /<ol class="task-list" dir="auto">\n<li class="task-list-item">\n<p><input type="checkbox" class="task-list-item-checkbox" disabled> first<\/p>/);
    // Tables with alignment (example 04_10 tables 002), strikethrough with two tildes.
    assert.equal(await gfm('| abc | defghi |\n:-: | -----------:\nbar | baz'), [
      '<table dir="auto">', '<thead>', '<tr>', '<th align="center">abc</th>', '<th align="right">defghi</th>', '</tr>', '</thead>',
      '<tbody>', '<tr>', '<td align="center">bar</td>', '<td align="right">baz</td>', '</tr>', '</tbody>', '</table>',
    ].join('\n'));
    assert.equal(
      await gfm('visit www.commonmark.org/help. (www.example.com/a?q=1) xwww.no.com'),
      '<p dir="auto">visit <a href="http://www.commonmark.org/help" rel="nofollow noreferrer noopener" target="_blank">www.commonmark.org/help</a>. '
        + '(<a href="http://www.example.com/a?q=1" rel="nofollow noreferrer noopener" target="_blank">www.example.com/a?q=1</a>) xwww.no.com</p>',
    );
    assert.equal(await gfm('~~gone~~ ~kept~'), '<p dir="auto"><del>gone</del> ~kept~</p>');
    // Autolinks; links to other hosts open in a new window without referrer (ExternalLinkFilter).
    assert.equal(
      await gfm('see https://example.com/a?b=1 and http://kiln.test/x and [rel](/y) and a@b.example'),
      '<p dir="auto">see <a href="https://example.com/a?b=1" rel="nofollow noreferrer noopener" target="_blank">https://example.com/a?b=1</a> '
        + 'and <a href="http://kiln.test/x">http://kiln.test/x</a> and <a href="/y">rel</a> and <a href="mailto:a@b.example">a@b.example</a></p>',
    );
    // Fenced code with its language, indented code as plaintext, one span per line.
    assert.equal(await gfm('```ruby\ndef x\n  1 < 2\nend\n```'), '<pre class="code highlight js-syntax-highlight language-ruby" lang="ruby" v-pre="true"><code>'
      + '<span id="LC1" class="line" lang="ruby">def x</span>\n<span id="LC2" class="line" lang="ruby">  1 &lt; 2</span>\n'
      + '<span id="LC3" class="line" lang="ruby">end</span></code></pre>');
    assert.equal(await gfm('    plain'), '<pre class="code highlight js-syntax-highlight language-plaintext" lang="plaintext" v-pre="true"><code>'
      + '<span id="LC1" class="line" lang="plaintext">plain</span></code></pre>');
    // Soft line breaks stay line breaks in the text; two trailing spaces make a <br> (example 04_08 paragraphs 008).
    assert.equal(await gfm('aaa  \nbbb\nccc'), '<p dir="auto">aaa<br>\nbbb\nccc</p>');
    // Emoji codes are not converted in code; unicode emoji are wrapped.
    assert.equal(await gfm('`:tada:` 👍'), '<p dir="auto"><code>:tada:</code> <gl-emoji title="thumbs up sign" data-name="thumbsup" data-unicode-version="6.0">👍</gl-emoji></p>');
    // Images load lazily and link to themselves; data: images are dropped.
    assert.equal(await gfm('![alt](/uploads/a.png) ![d](data:image/png;base64,AAAA)'), '<p dir="auto"><a class="no-attachment-icon" href="/uploads/a.png" target="_blank" rel="noopener noreferrer">'
      + '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==" alt="alt" class="lazy" data-src="/uploads/a.png"></a> <img alt="d"></p>');
    // Raw HTML keeps only the allowlist (details/summary, kbd, abbr title; no class, id or style).
    assert.equal(
      await gfm('<details><summary>More</summary><kbd class="x" id="y" style="color:red">K</kbd> <abbr title="t">A</abbr></details>'),
      '<details><summary>More</summary><kbd>K</kbd> <abbr title="t">A</abbr></details>',
    );
  });

  it('renders plain CommonMark with the engine\'s GFM tables without gfm', async () => {
    const plain = (text: string) => html({ text }, ownerToken);
    assert.equal(await plain('# foo\n\n- [ ] todo\n\n:tada: ~~x~~'), '<h1 dir="auto">foo</h1>\n<ul dir="auto">\n<li>[ ] todo</li>\n</ul>\n<p dir="auto">:tada: <del>x</del></p>');
    assert.equal(await plain('```js\nx\n```'), '<pre><code lang="js">x\n</code></pre>');
    assert.equal(await plain('a | b\n--|--\n1 | 2'), '<table dir="auto">\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>');
    assert.equal(await plain('#1 @owner', ), '<p dir="auto">#1 @owner</p>');
    assert.equal(await plain('[x](javascript:alert(1)) <script>alert(1)</script>'), '<p dir="auto"><a>x</a> </p>');
  });

  it('links users without a project, and nothing else', async () => {
    assert.equal(
      await html({ text: '@owner, @OWNER. @nobody @blocked a@owner #1 ~bug %v1.0', gfm: true }, strangerToken),
      '<p dir="auto"><a href="http://kiln.test/owner" data-reference-type="user" data-user="' + owner.id + '" data-container="body" data-placement="top" '
        + 'class="gfm gfm-project_member js-user-link" title="Olga Owner">@owner</a>, '
        + '<a href="http://kiln.test/owner" data-reference-type="user" data-user="' + owner.id + '" data-container="body" data-placement="top" '
        + 'class="gfm gfm-project_member js-user-link" title="Olga Owner">@OWNER</a>. @nobody @blocked a@owner #1 ~bug %v1.0</p>',
    );
  });

  it('links issues, labels, milestones and @all of the context project', async () => {
    const out = await html({ text: '#1 #2 #99 !1 ~bug ~"two words" ~team ~nothing %v1.0 %"big release" %1 %Q4 @all', gfm: true, project: 'acme/app' }, ownerToken);
    const links = [...out.matchAll(/<a [^>]*>/g)].map((m) => m[0]);
    assert.equal(links[0], `<a href="http://kiln.test/acme/app/-/issues/1" data-reference-type="issue" data-original="#1" data-link="false" `
      + `data-link-reference="false" data-project="${projectId}" data-issue="${await idOf('issues', projectId, 1)}" data-project-path="acme/app" `
      + 'data-iid="1" data-issue-type="issue" data-container="body" data-placement="top" title="First issue" class="gfm gfm-issue has-tooltip">');
    assert.match(out, /title="Hidden issue" class="gfm gfm-issue has-tooltip">#2<\/a> #99 !1 /);
    // The project's label wins over the group's of the same name; labels carry their colour.
    assert.match(out, new RegExp('<span class="gl-label gl-label-sm"><a href="http://kiln.test/acme/app/-/issues\\?label_name=bug" data-reference-type="label" '
      + `data-original="~bug" data-link="false" data-link-reference="false" data-project="${projectId}" data-label="\\d+" data-container="body" `
      + 'data-placement="top" title="about bug" class="gfm gfm-label has-tooltip gl-link gl-label-link"><span class="gl-label-text gl-label-text-light" '
      + 'data-container="body" data-html="true" style="background-color: #ff0000">bug</span></a></span>'));
    assert.match(out, /label_name=two%20words" [^>]*data-original="~&quot;two words&quot;"[^>]*><span class="gl-label-text gl-label-text-dark"[^>]*>two words<\/span>/);
    assert.match(out, /label_name=team" data-reference-type="label" data-original="~team" data-link="false" data-link-reference="false" data-label=/);
    assert.match(out, / ~nothing /);
    assert.match(out, new RegExp(`<a href="http://kiln.test/acme/app/-/milestones/1" data-reference-type="milestone" data-original="%v1.0" data-link="false" `
      + `data-link-reference="false" data-project="${projectId}" data-milestone="\\d+" data-container="body" data-placement="top" title `
      + 'class="gfm gfm-milestone has-tooltip">%v1.0</a>'));
    assert.match(out, /milestones\/2" [^>]*data-original="%&quot;big release&quot;"[^>]*>%big release<\/a>/);
    assert.match(out, /milestones\/1" [^>]*data-original="%1"[^>]*>%v1.0<\/a>/);
    assert.match(out, /<a href="http:\/\/kiln.test\/groups\/acme\/-\/milestones\/1" [^>]*data-original="%Q4"[^>]*>%Q4<\/a>/);
    assert.match(out, new RegExp(`<a href="http://kiln.test/acme/app" data-reference-type="user" data-project="${projectId}" data-author="${owner.id}" `
      + 'data-container="body" data-placement="top" class="gfm gfm-project_member js-user-link" title="All Project and Group Members">@all</a>'));
  });

  async function idOf(table: 'issues', project: number, iid: number): Promise<number> {
    const row = await t.db.selectFrom(table).select('id').where('project_id', '=', project).where('iid', '=', iid).executeTakeFirstOrThrow();
    return row.id;
  }

  it('leaves a confidential issue as text for those who may not see it', async () => {
    const text = { text: 'see #1 and #2', gfm: true, project: 'acme/app' };
    const stranger = await html(text, strangerToken);
    assert.match(stranger, /title="First issue"/);
    assert.match(stranger, /<\/a> and #2<\/p>$/);
    assert.equal(await html(text), stranger);
    // Reporters and the author see it.
    assert.match(await html(text, reporterToken), /title="Hidden issue"/);
    assert.match(await html(text, authorToken), /title="Hidden issue"/);
  });

  it('links a private project\'s references for its members only', async () => {
    const text = { text: '#1 ~secret-label', gfm: true, project: 'acme/secret' };
    assert.match(await html(text, ownerToken), /title="Private issue"[\s\S]*secret-label<\/span><\/a><\/span><\/p>$/);
    assert.match(await html(text, ROOT_TOKEN), /title="Private issue"/);
    // Another project's references never resolve in this context.
    assert.equal(await html({ text: '~secret-label', gfm: true, project: 'acme/app' }, ownerToken), '<p dir="auto">~secret-label</p>');
  });

  it('never links references in code, preformatted text or links', async () => {
    const out = await html({ text: '`#1 @owner` [#1 @owner](/x)\n\n```\n#1 ~bug\n```\n\n<pre>@owner</pre>', gfm: true, project: 'acme/app' }, ownerToken);
    assert.doesNotMatch(out, /gfm-/);
  });

  it('stays safe and bounded on deep nesting and long texts', async () => {
    const deep = await html({ text: '>'.repeat(5000) + ' x\n\n' + '<div>'.repeat(5000) + 'y', gfm: true }, ownerToken);
    // Past the engine's nesting bound the quote's text is dropped; deeper HTML loses its tags, not its text.
    assert.match(deep, /<div>y<\/div>/);
    assert.ok(depth(parseDocument(deep)) < 200);
    const refs = Array.from({ length: 3000 }, (_, i) => `#${i + 1} @u${i}`).join(' ');
    assert.match(await html({ text: refs, gfm: true, project: 'acme/app' }, ownerToken), /title="First issue"/);
  });

  it('renders long texts in a worker thread with the same result, without holding up short ones', async () => {
    const text = '# Title\n\n' + 'see #1, #2, ~bug, %v1.0 and @owner :tada:\n\n'.repeat(600);
    assert.ok(text.length > 16_384);
    const payload = { text, gfm: true, project: 'acme/app' };
    const expected = '<p dir="auto">see <a href="http://kiln.test/acme/app/-/issues/1"';
    const [long, short] = await Promise.all([
      (async () => { const out = await html({ ...payload, text: 'x'.repeat(10) + text }, strangerToken); return { out, at: performance.now() }; })(),
      (async () => { const out = await html({ text: 'short #1', gfm: true, project: 'acme/app' }, strangerToken); return { out, at: performance.now() }; })(),
    ]);
    assert.ok(short.at < long.at, 'the short text is answered first');
    assert.match(short.out, /title="First issue"/);
    assert.ok(long.out.includes(expected));
    // The confidential issue stays text for the stranger in the worker too.
    assert.doesNotMatch(long.out, /Hidden issue/);
    const inWorker = await html(payload, reporterToken);
    assert.equal((inWorker.match(/title="Hidden issue"/g) ?? []).length, 600);
    assert.equal((inWorker.match(/<gl-emoji /g) ?? []).length, 600);
    assert.match(inWorker, /^<h1 dir="auto"><a id="user-content-title"/);
  });

  function depth(node: AnyNode): number {
    return hasChildren(node) ? 1 + Math.max(0, ...node.children.map(depth)) : 0;
  }

  describe('sanitising (test/fixtures/markdown/xss.txt)', () => {
    const DANGEROUS_ELEMENTS = new Set(['script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'style', 'link', 'meta', 'base', 'svg',
      'math', 'form', 'button', 'textarea', 'select', 'keygen', 'isindex', 'applet', 'template', 'noscript', 'xmp', 'body', 'bgsound']);
    const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'formaction', 'xlink:href', 'data', 'background', 'lowsrc', 'dynsrc', 'srcset',
      'cite', 'longdesc', 'poster', 'srcdoc']);
    const SAFE_DATA_IMAGE = /^data:image\/(?:gif|png|jpeg|webp);base64,[a-z0-9+/=]*$/i;

    /** What a browser makes of a URL's scheme: whitespace and control characters ignored. */
    function schemeOf(url: string): string {
      const cleaned = url.replace(/[\u0000-\u0020]/g, '').toLowerCase();
      return /^([a-z][a-z0-9+.-]*):/.exec(cleaned)?.[1] ?? '';
    }

    function vectors(html: string): string[] {
      const found: string[] = [];
      const walk = (node: AnyNode) => {
        if (!(node instanceof Element)) {
          if (hasChildren(node)) for (const c of node.children) walk(c);
          return;
        }
        if (DANGEROUS_ELEMENTS.has(node.name)) found.push(`<${node.name}>`);
        for (const [name, value] of Object.entries(node.attribs)) {
          if (name.startsWith('on')) found.push(`${name} on <${node.name}>`);
          if (name === 'style' && !/^text-align:\s*(?:left|right|center);?$/.test(value)) found.push(`style="${value}"`);
          if (URL_ATTRIBUTES.has(name)) {
            const scheme = schemeOf(value);
            if (['javascript', 'vbscript', 'livescript'].includes(scheme)) found.push(`${name}=${value}`);
            if (scheme === 'data' && !SAFE_DATA_IMAGE.test(value.trim())) found.push(`${name}=${value}`);
          }
        }
        for (const c of node.children) walk(c);
      };
      walk(parseDocument(html));
      return found;
    }

    it('leaves no executable vector in either pipeline', async () => {
      const corpus = await fs.readFile(path.join(import.meta.dirname, '../fixtures/markdown/xss.txt'), 'utf8');
      const cases = corpus.split('\n').filter((l) => l !== '' && !l.startsWith('# ')).map((l) => l.replace(/\\n/g, '\n'));
      assert.ok(cases.length > 100);
      for (const gfm of [true, false]) {
        for (const text of cases) {
          const out = await html({ text, gfm, project: 'acme/app' }, ownerToken);
          assert.deepEqual(vectors(out), [], `${JSON.stringify(text)} (gfm: ${gfm}) rendered as ${out}`);
        }
      }
    });

    it('the checker itself finds vectors', () => {
      assert.deepEqual(vectors('<a href="jav\tascript:x" onclick="y">a</a><img src="data:text/html,x"><script></script>').sort(),
        ['<script>', 'href=jav\tascript:x', 'onclick on <a>', 'src=data:text/html,x']);
    });
  });
});
