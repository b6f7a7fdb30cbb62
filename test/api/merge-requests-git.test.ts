/**
 * Merge requests on real git (issue 30, item 1): commits, changes and diffs of the merge base to
 * the source head, a diff version per push, merging with a merge commit, fast-forward and squash,
 * the `sha` guard, conflicts (merge status and 405), the merge ref, rebase, removing the source
 * branch, `Closes #n` closing issues, approvals, subscriptions, time tracking, resource events
 * and notes, threads and award emoji on a merge request. Every merge is checked with git itself.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { UserRow } from '../../src/db/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

describe('merge requests on real git', () => {
  let t: TestApp;
  let dev: UserRow;
  let devToken: string;
  let reporterToken: string;
  let project: { id: number; path_with_namespace: string };
  let gitDir: string;
  const api = () => `/api/v4/projects/${project.id}`;
  const mrs = () => `${api()}/merge_requests`;
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], {
    encoding: 'utf8', env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: '/tmp' },
  }).trim();

  async function commit(branch: string, actions: { action?: string; file_path: string; content?: string }[], start?: string, message?: string) {
    const res = await t.request({
      method: 'POST', url: `${api()}/repository/commits`, token: devToken,
      payload: {
        branch, ...(start ? { start_branch: start } : {}), commit_message: message ?? `Change on ${branch}`,
        actions: actions.map((a) => ({ action: a.action ?? 'create', ...a })),
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  }

  async function open(source: string, extra: Record<string, unknown> = {}) {
    const res = await t.request({ method: 'POST', url: mrs(), token: devToken, payload: { source_branch: source, target_branch: 'main', title: `MR ${source}`, ...extra } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as Record<string, any>;
  }

  async function checked(iid: number, not = ''): Promise<Record<string, any>> {
    for (let i = 0; i < 200; i += 1) {
      const body = (await t.request({ method: 'GET', url: `${mrs()}/${iid}`, token: devToken })).json();
      if (body.merge_status !== 'unchecked' && body.merge_status !== 'checking' && body.merge_status !== not) return body;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('merge status never checked');
  }

  /** The request once `pred` holds of it (the checks after a push run in the background). */
  async function until(iid: number, pred: (mr: Record<string, any>) => boolean): Promise<Record<string, any>> {
    let body: Record<string, any> = {};
    for (let i = 0; i < 200; i += 1) {
      body = (await t.request({ method: 'GET', url: `${mrs()}/${iid}`, token: devToken })).json();
      if (pred(body)) return body;
      await new Promise((r) => setTimeout(r, 30));
    }
    assert.fail(`never reached: ${JSON.stringify(body)}`);
  }

  before(async () => {
    t = await startTestApp({ KILN_JOB_POLL_MS: '20', KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    dev = await createUser(t.db, { username: 'gdev', name: 'G Dev', email: 'gdev@example.com' });
    devToken = await createToken(t.db, dev);
    const reporter = await createUser(t.db, { username: 'grep' });
    reporterToken = await createToken(t.db, reporter);
    const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: devToken, payload: { name: 'gitmrs', initialize_with_readme: true } });
    project = res.json();
    await t.request({ method: 'POST', url: `${api()}/members`, token: devToken, payload: { user_id: reporter.id, access_level: 20 } });
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
    gitDir = path.join(t.dataDir, 'repositories', row.disk_path);
  });
  after(async () => { await t.close(); });

  it('commits, changes, diffs and a diff version per push', async () => {
    const first = await commit('feat', [{ file_path: 'src/a.txt', content: 'one\ntwo\n' }], 'main', 'Add a');
    const mr = await open('feat');
    const second = await commit('feat', [{ action: 'update', file_path: 'src/a.txt', content: 'one\n2\n' }, { file_path: 'b.bin', content: 'b' }], undefined, 'Change a, add b');
    // The push's version is written after the write answers.
    let versions: any[] = [];
    for (let i = 0; i < 100 && versions.length < 2; i += 1) {
      versions = (await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}/versions`, token: devToken })).json();
      await new Promise((r) => setTimeout(r, 30));
    }
    assert.deepEqual(versions.map((v) => v.head_commit_sha), [second, first]);
    const base = git('merge-base', 'main', 'feat');
    assert.equal(versions[0].base_commit_sha, base);
    assert.equal(versions[0].real_size, '2');
    const v1 = (await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}/versions/${versions[1].id}`, token: devToken })).json();
    assert.deepEqual(v1.commits.map((c: { id: string }) => c.id), [first]);
    assert.deepEqual(v1.diffs.map((d: { new_path: string }) => d.new_path), ['src/a.txt']);
    const commits = (await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}/commits`, token: devToken })).json();
    assert.deepEqual(commits.map((c: { id: string; title: string }) => [c.id, c.title]), [[second, 'Change a, add b'], [first, 'Add a']]);
    const changes = (await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}/changes`, token: devToken })).json();
    assert.equal(changes.overflow, false);
    assert.equal(changes.changes_count, '2');
    const a = changes.changes.find((d: { new_path: string }) => d.new_path === 'src/a.txt');
    assert.deepEqual({ ...a, diff: undefined }, {
      old_path: 'src/a.txt', new_path: 'src/a.txt', a_mode: '000000', b_mode: '100644', new_file: true, renamed_file: false, deleted_file: false, diff: undefined,
    });
    assert.equal(a.diff, '@@ -0,0 +1,2 @@\n+one\n+2\n');
    const diffs = await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}/diffs?per_page=1`, token: devToken });
    assert.equal(diffs.json().length, 1);
    assert.equal(diffs.headers['x-total'], '2');
    const participants = (await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}/participants`, token: devToken })).json();
    assert.deepEqual(participants.map((u: { username: string }) => u.username), ['gdev']);
  });

  it('merges with a merge commit, guards the sha, closes the issues it names and removes the source branch', async () => {
    const issue = (await t.request({ method: 'POST', url: `${api()}/issues`, token: devToken, payload: { title: 'Bug' } })).json();
    const head = await commit('fix', [{ file_path: 'fix.txt', content: 'fixed\n' }], 'main');
    const mr = await open('fix', { description: `Fixes #${issue.iid}` });
    const closes = (await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}/closes_issues`, token: devToken })).json();
    assert.deepEqual(closes.map((i: { iid: number }) => i.iid), [issue.iid]);
    // The issue counts the request that closes it (merge_requests_closing_issues) while the
    // description names it; with merge requests private to members, a Guest does not count it.
    const guest = await createUser(t.db, { username: 'gguest' });
    const guestToken = await createToken(t.db, guest);
    await t.request({ method: 'POST', url: `${api()}/members`, token: devToken, payload: { user_id: guest.id, access_level: 10 } });
    const counted = async (token: string) => {
      const res = await t.request({ method: 'GET', url: `${api()}/issues/${issue.iid}`, token });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().merge_requests_count;
    };
    assert.deepEqual([await counted(devToken), await counted(reporterToken), await counted(guestToken)], [1, 1, 1]);
    await t.request({ method: 'PUT', url: api(), token: devToken, payload: { merge_requests_access_level: 'private' } });
    assert.deepEqual([await counted(devToken), await counted(reporterToken), await counted(guestToken)], [1, 1, 0]);
    await t.request({ method: 'PUT', url: api(), token: devToken, payload: { merge_requests_access_level: 'enabled' } });
    await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}`, token: devToken, payload: { description: 'No reference' } });
    assert.equal(await counted(devToken), 0);
    await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}`, token: devToken, payload: { description: `Fixes #${issue.iid}` } });
    assert.equal(await counted(devToken), 1);
    const byReporter = await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}/merge`, token: reporterToken });
    assert.equal(byReporter.statusCode, 401);
    const stale = await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}/merge`, token: devToken, payload: { sha: '0'.repeat(40) } });
    assert.equal(stale.statusCode, 409);
    assert.deepEqual(stale.json(), { message: `SHA does not match HEAD of source branch: ${head}` });
    const mainBefore = git('rev-parse', 'main');
    const merged = await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}/merge`, token: devToken, payload: { sha: head, should_remove_source_branch: true } });
    assert.equal(merged.statusCode, 200, merged.body);
    const body = merged.json();
    assert.equal(body.state, 'merged');
    assert.equal(body.merged_by.username, 'gdev');
    assert.ok(body.merged_at);
    const mainAfter = git('rev-parse', 'main');
    assert.equal(body.merge_commit_sha, mainAfter);
    assert.equal(git('rev-parse', `${mainAfter}^1`), mainBefore);
    assert.equal(git('rev-parse', `${mainAfter}^2`), head);
    assert.equal(git('log', '-1', '--format=%B', mainAfter), `Merge branch 'fix' into 'main'\n\nMR fix\n\nCloses #${issue.iid}\n\nSee merge request ${project.path_with_namespace}!${mr.iid}`);
    assert.equal(git('for-each-ref', 'refs/heads/fix'), '');
    const closed = (await t.request({ method: 'GET', url: `${api()}/issues/${issue.iid}`, token: devToken })).json();
    assert.equal(closed.state, 'closed');
    const again = await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}/merge`, token: devToken });
    assert.equal(again.statusCode, 405);
    // The request holds its commit (a diff version's) and its merge commit (MergeRequest.by_related_commit_sha).
    const holding = async (sha: string) => {
      const res = await t.request({ method: 'GET', url: `${api()}/repository/commits/${sha}/merge_requests`, token: reporterToken });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().map((m: { iid: number }) => m.iid);
    };
    assert.deepEqual(await holding(head), [mr.iid]);
    assert.deepEqual(await holding(mainAfter), [mr.iid]);
    assert.deepEqual(await holding(mainBefore), []);
    const unknown = await t.request({ method: 'GET', url: `${api()}/repository/commits/${'f'.repeat(40)}/merge_requests`, token: devToken });
    assert.deepEqual(unknown.json(), { message: '404 Commit Not Found' });
    const states = (await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}/resource_state_events`, token: devToken })).json();
    assert.deepEqual(states.map((e: { state: string; resource_type: string }) => [e.state, e.resource_type]), [['merged', 'MergeRequest']]);
  });

  it('a conflict is cannot_be_merged after the check, 405 on merge, 400 from merge_ref; rebase refuses it', async () => {
    await commit('clash', [{ file_path: 'same.txt', content: 'theirs\n' }], 'main');
    const mr = await open('clash');
    assert.equal((await checked(mr.iid)).merge_status, 'can_be_merged');
    const ref = await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}/merge_ref`, token: devToken });
    assert.equal(ref.statusCode, 200, ref.body);
    assert.equal(git('rev-parse', `refs/merge-requests/${mr.iid}/merge`), ref.json().commit_id);
    await commit('main', [{ file_path: 'same.txt', content: 'ours\n' }]);
    const after = await checked(mr.iid, 'can_be_merged');
    assert.equal(after.merge_status, 'cannot_be_merged');
    assert.equal(after.has_conflicts, true);
    assert.equal(after.detailed_merge_status, 'broken_status');
    assert.equal((await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}/merge`, token: devToken })).statusCode, 405);
    const refAfter = await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}/merge_ref`, token: devToken });
    assert.equal(refAfter.statusCode, 400);
    const rebase = await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}/rebase`, token: devToken });
    assert.equal(rebase.statusCode, 202);
    assert.deepEqual(rebase.json(), { rebase_in_progress: true });
    let state: any;
    for (let i = 0; i < 100; i += 1) {
      state = (await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}?include_rebase_in_progress=true`, token: devToken })).json();
      if (!state.rebase_in_progress) break;
      await new Promise((r) => setTimeout(r, 30));
    }
    assert.match(state.merge_error, /^Rebase failed/);
  });

  it('rebases a branch behind its target, then fast-forwards a squashed merge on an ff-only project', async () => {
    await commit('behind', [{ file_path: 'one.txt', content: '1\n' }], 'main', 'One');
    await commit('behind', [{ file_path: 'two.txt', content: '2\n' }], undefined, 'Two');
    const mr = await open('behind', { squash: true });
    await commit('main', [{ file_path: 'moved.txt', content: 'm\n' }]);
    const upd = await t.request({ method: 'PUT', url: api(), token: devToken, payload: { merge_method: 'ff' } });
    assert.equal(upd.statusCode, 200, upd.body);
    await until(mr.iid, (m) => m.detailed_merge_status === 'need_rebase');
    assert.equal((await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}/merge`, token: devToken })).statusCode, 405);
    assert.equal((await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}/rebase`, token: devToken })).statusCode, 202);
    for (let i = 0; i < 100; i += 1) {
      const s = (await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}?include_rebase_in_progress=true`, token: devToken })).json();
      if (!s.rebase_in_progress) { assert.equal(s.merge_error, null); break; }
      await new Promise((r) => setTimeout(r, 30));
    }
    const main = git('rev-parse', 'main');
    assert.equal(git('rev-parse', 'behind~2'), main);
    assert.equal(git('log', '--format=%s', '-2', 'behind'), 'Two\nOne');
    await until(mr.iid, (m) => m.detailed_merge_status === 'mergeable' && m.sha === git('rev-parse', 'behind'));
    const merged = await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}/merge`, token: devToken, payload: { squash_commit_message: 'Squashed' } });
    assert.equal(merged.statusCode, 200, merged.body);
    const m = merged.json();
    const tip = git('rev-parse', 'main');
    assert.equal(m.merge_commit_sha, null);
    assert.equal(m.squash_commit_sha, tip);
    assert.equal(git('rev-parse', `${tip}^`), main);
    assert.equal(git('log', '-1', '--format=%s', tip), 'Squashed');
    assert.equal(git('ls-tree', '--name-only', tip).split('\n').includes('two.txt'), true);
    assert.equal(git('for-each-ref', 'refs/heads/behind') !== '', true);
    await t.request({ method: 'PUT', url: api(), token: devToken, payload: { merge_method: 'merge' } });
  });

  it('a push to the target that takes the whole source branch marks the request merged', async () => {
    const head = await commit('manual', [{ file_path: 'manual.txt', content: 'm\n' }], 'main');
    const mr = await open('manual');
    // The target takes the source's commit outside the request: main fast-forwards to it through a
    // ref write, forced (start_sha), which the protected default branch must allow first.
    const allow = await t.request({
      method: 'PATCH', url: `${api()}/protected_branches/main`, token: devToken, payload: { allow_force_push: true },
    });
    assert.equal(allow.statusCode, 200, allow.body);
    const main = git('rev-parse', 'main');
    const res = await t.request({ method: 'POST', url: `${api()}/repository/commits`, token: devToken, payload: {
      branch: 'main', start_sha: head, force: true, commit_message: 'On top', actions: [{ action: 'create', file_path: 'top.txt', content: 't' }],
    } });
    assert.equal(res.statusCode, 201, res.body);
    assert.notEqual(git('rev-parse', 'main'), main);
    const merged = await until(mr.iid, (m) => m.state === 'merged');
    assert.equal(merged.merged_by.username, 'gdev');
  });

  it('approvals, subscriptions, time tracking, labels and milestone events', async () => {
    await commit('misc', [{ file_path: 'misc.txt', content: 'm\n' }], 'main');
    const mr = await open('misc');
    const u = `${mrs()}/${mr.iid}`;
    const none = (await t.request({ method: 'GET', url: `${u}/approvals`, token: devToken })).json();
    assert.deepEqual(none, { user_has_approved: false, user_can_approve: true, approved: false, approved_by: [] });
    const ok = await t.request({ method: 'POST', url: `${u}/approve`, token: devToken });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(ok.json().approved_by[0].user.username, 'gdev');
    assert.equal((await t.request({ method: 'POST', url: `${u}/approve`, token: devToken })).statusCode, 401);
    assert.equal((await t.request({ method: 'POST', url: `${u}/approve`, token: reporterToken })).statusCode, 401);
    assert.equal((await t.request({ method: 'POST', url: `${u}/unapprove`, token: devToken })).statusCode, 201);
    assert.equal((await t.request({ method: 'POST', url: `${u}/unapprove`, token: devToken })).statusCode, 404);
    // Bots (a project access token's user) reset approvals; people may not.
    await t.request({ method: 'POST', url: `${u}/approve`, token: devToken });
    assert.equal((await t.request({ method: 'PUT', url: `${u}/reset_approvals`, token: devToken })).statusCode, 401);
    const bot = await t.request({ method: 'POST', url: `${api()}/access_tokens`, token: devToken, payload: { name: 'bot', scopes: ['api'] } });
    assert.equal(bot.statusCode, 201, bot.body);
    const reset = await t.request({ method: 'PUT', url: `${u}/reset_approvals`, token: bot.json().token });
    assert.equal(reset.statusCode, 202, reset.body);
    assert.equal(reset.body, '202');
    assert.equal((await t.request({ method: 'GET', url: `${u}/approvals`, token: devToken })).json().approved, false);
    assert.equal((await t.request({ method: 'POST', url: `${u}/subscribe`, token: devToken })).statusCode, 304);
    const unsub = await t.request({ method: 'POST', url: `${u}/unsubscribe`, token: devToken });
    assert.equal(unsub.statusCode, 201);
    assert.equal(unsub.json().subscribed, false);
    const est = await t.request({ method: 'POST', url: `${u}/time_estimate`, token: devToken, payload: { duration: '3h30m' } });
    assert.equal(est.json().human_time_estimate, '3h 30m');
    const spent = await t.request({ method: 'POST', url: `${u}/add_spent_time`, token: devToken, payload: { duration: '1h' } });
    assert.equal(spent.statusCode, 201);
    assert.equal(spent.json().total_time_spent, 3600);
    assert.equal((await t.request({ method: 'GET', url: u, token: devToken })).json().time_stats.total_time_spent, 3600);
    const ms = (await t.request({ method: 'POST', url: `${api()}/milestones`, token: devToken, payload: { title: 'v1' } })).json();
    await t.request({ method: 'PUT', url: u, token: devToken, payload: { labels: 'label2', milestone_id: ms.id } });
    const labelEvents = (await t.request({ method: 'GET', url: `${u}/resource_label_events`, token: devToken })).json();
    assert.deepEqual(labelEvents.map((e: any) => [e.action, e.label.name, e.resource_type, e.resource_id]), [['add', 'label2', 'MergeRequest', mr.id]]);
    const one = await t.request({ method: 'GET', url: `${u}/resource_label_events/${labelEvents[0].id}`, token: devToken });
    assert.equal(one.statusCode, 200);
    const msEvents = (await t.request({ method: 'GET', url: `${u}/resource_milestone_events`, token: devToken })).json();
    assert.deepEqual(msEvents.map((e: any) => [e.action, e.milestone.title]), [['add', 'v1']]);
  });

  // Last: main gains a CI configuration here, so later pushes would start pipelines.
  it('merge when pipeline succeeds: waits for the running head pipeline, merges when it succeeds; cancel', async () => {
    const head = await commit('auto', [{ file_path: '.gitlab-ci.yml', content: 'build:\n  script: echo hi\n' }], 'main');
    let pipelines: any[] = [];
    for (let i = 0; i < 100 && pipelines.length === 0; i += 1) {
      pipelines = (await t.request({ method: 'GET', url: `${api()}/pipelines?ref=auto`, token: devToken })).json();
      await new Promise((r) => setTimeout(r, 30));
    }
    assert.equal(pipelines[0].sha, head);
    const mr = await open('auto');
    const waiting = await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}/merge`, token: devToken, payload: { merge_when_pipeline_succeeds: true } });
    assert.equal(waiting.statusCode, 200, waiting.body);
    assert.equal(waiting.json().merge_when_pipeline_succeeds, true);
    assert.equal(waiting.json().state, 'opened');
    assert.equal(waiting.json().head_pipeline.id, pipelines[0].id);
    const runner = await TestRunner.register(t);
    await runner.run('success');
    const merged = await until(mr.iid, (m) => m.state === 'merged');
    assert.equal(merged.merge_when_pipeline_succeeds, false);
    assert.equal(merged.merged_by.username, 'gdev');
    assert.equal(git('rev-parse', 'main^2'), head);
    const mrPipelines = (await t.request({ method: 'GET', url: `${mrs()}/${mr.iid}/pipelines`, token: devToken })).json();
    assert.deepEqual(mrPipelines.map((p: { id: number; status: string }) => [p.id, p.status]), [[pipelines[0].id, 'success']]);

    await commit('auto2', [{ file_path: 'auto2.txt', content: 'x\n' }], 'main');
    const mr2 = await open('auto2');
    await until(mr2.iid, (m) => m.head_pipeline !== null);
    const set = await t.request({ method: 'PUT', url: `${mrs()}/${mr2.iid}/merge`, token: devToken, payload: { merge_when_pipeline_succeeds: true } });
    assert.equal(set.json().merge_when_pipeline_succeeds, true);
    const cancel = await t.request({ method: 'POST', url: `${mrs()}/${mr2.iid}/cancel_merge_when_pipeline_succeeds`, token: devToken });
    assert.equal(cancel.statusCode, 201, cancel.body);
    assert.deepEqual(cancel.json(), { status: 'success' });
    const after = (await t.request({ method: 'GET', url: `${mrs()}/${mr2.iid}`, token: devToken })).json();
    assert.equal(after.merge_when_pipeline_succeeds, false);
    assert.equal((await t.request({ method: 'POST', url: `${mrs()}/${mr2.iid}/cancel_merge_when_pipeline_succeeds`, token: devToken })).statusCode, 405);

    // A project that merges only after a successful pipeline: with every other check passing, the
    // head pipeline decides the detailed status, on a single read and in a list alike.
    await t.request({ method: 'PUT', url: api(), token: devToken, payload: { only_allow_merge_if_pipeline_succeeds: true } });
    const running = await until(mr2.iid, (m) => m.detailed_merge_status !== 'checking');
    assert.equal(running.detailed_merge_status, 'ci_still_running');
    const listed = (await t.request({ method: 'GET', url: `${mrs()}?iids[]=${mr2.iid}`, token: devToken })).json();
    assert.equal(listed[0].detailed_merge_status, 'ci_still_running');
    // Main's pipeline of the first merge waits in the queue too: fail every job.
    for (let job = await runner.request(); job; job = await runner.request()) {
      assert.equal((await runner.update(job, 'failed', 'script_failure')).statusCode, 200);
    }
    await until(mr2.iid, (m) => m.detailed_merge_status === 'ci_must_pass');
    assert.equal((await t.request({ method: 'PUT', url: `${mrs()}/${mr2.iid}/merge`, token: devToken })).statusCode, 405);
    await t.request({ method: 'PUT', url: api(), token: devToken, payload: { only_allow_merge_if_pipeline_succeeds: false } });
    assert.equal((await until(mr2.iid, () => true)).detailed_merge_status, 'mergeable');
  });

  it('notes, threads that resolve, and award emoji on a merge request', async () => {
    await commit('talk', [{ file_path: 'talk.txt', content: 't\n' }], 'main');
    const mr = await open('talk');
    const u = `${mrs()}/${mr.iid}`;
    const note = await t.request({ method: 'POST', url: `${u}/notes`, token: devToken, payload: { body: 'Looks good' } });
    assert.equal(note.statusCode, 201, note.body);
    assert.equal(note.json().noteable_type, 'MergeRequest');
    assert.equal(note.json().noteable_iid, mr.iid);
    const d = await t.request({ method: 'POST', url: `${u}/discussions`, token: devToken, payload: { body: 'Discussion body' } });
    assert.equal(d.statusCode, 201, d.body);
    const discussion = d.json();
    assert.equal(discussion.notes[0].resolvable, true);
    const replied = await t.request({ method: 'POST', url: `${u}/discussions/${discussion.id}/notes`, token: devToken, payload: { body: 'first note' } });
    assert.equal(replied.statusCode, 201, replied.body);
    const resolved = await t.request({ method: 'PUT', url: `${u}/discussions/${discussion.id}/notes/${discussion.notes[0].id}`, token: devToken, payload: { resolved: true } });
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal(resolved.json().resolved, true);
    const edited = await t.request({ method: 'PUT', url: `${u}/discussions/${discussion.id}/notes/${replied.json().id}`, token: devToken, payload: { body: 'updated body' } });
    assert.equal(edited.json().body, 'updated body');
    // The whole thread at once (PUT …/discussions/:discussion_id): every resolvable note of it, and back.
    const thread = (resolved: unknown, id = discussion.id) =>
      t.request({ method: 'PUT', url: `${u}/discussions/${id}`, token: devToken, payload: resolved === undefined ? {} : { resolved } });
    const whole = await thread(true);
    assert.equal(whole.statusCode, 200, whole.body);
    assert.equal(whole.json().id, discussion.id);
    assert.deepEqual(whole.json().notes.map((n: { resolved: boolean }) => n.resolved), [true, true]);
    const reopened = await thread(false);
    assert.deepEqual(reopened.json().notes.map((n: { resolved: boolean; resolved_by: unknown }) => [n.resolved, n.resolved_by]), [[false, null], [false, null]]);
    assert.deepEqual((await thread(undefined)).json(), { message: '400 Bad request - "resolved" not given' });
    assert.deepEqual((await thread(true, 'f'.repeat(40))).json(), { message: '404 Discussion Not Found' });
    // A comment of the notes API is an individual note, which no one resolves.
    const individual = (await t.request({ method: 'GET', url: `${u}/discussions`, token: devToken })).json()
      .find((x: { individual_note: boolean }) => x.individual_note);
    assert.equal((await thread(true, individual.id)).statusCode, 403);
    assert.equal((await t.request({ method: 'PUT', url: `/api/v4/projects/${project.id}/issues/1/discussions/${discussion.id}`, token: devToken, payload: { resolved: true } })).statusCode, 404);
    await thread(true);
    const list = (await t.request({ method: 'GET', url: `${u}/discussions`, token: devToken })).json();
    assert.equal(list.length, 2);
    // A diff note on a line of the request's diff; a line outside it is refused as the Service's DiffNote validation refuses it.
    const refs = (await t.request({ method: 'GET', url: u, token: devToken })).json().diff_refs;
    const position = { ...refs, position_type: 'text', new_path: 'talk.txt', old_path: 'talk.txt', new_line: 1 };
    const diffNote = await t.request({ method: 'POST', url: `${u}/discussions`, token: devToken, payload: { body: 'On this line', position } });
    assert.equal(diffNote.statusCode, 201, diffNote.body);
    assert.equal(diffNote.json().individual_note, false);
    assert.equal(diffNote.json().notes[0].type, 'DiffNote');
    assert.equal(diffNote.json().notes[0].position.new_line, 1);
    assert.equal(diffNote.json().notes[0].resolvable, true);
    const replyOnLine = await t.request({ method: 'POST', url: `${u}/discussions/${diffNote.json().id}/notes`, token: devToken, payload: { body: 'Agreed' } });
    assert.equal(replyOnLine.json().type, 'DiffNote');
    const offDiff = await t.request({ method: 'POST', url: `${u}/discussions`, token: devToken, payload: { body: 'x', position: { ...position, new_line: 99 } } });
    assert.equal(offDiff.statusCode, 400);
    assert.deepEqual(offDiff.json(), { message: '400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid line code"]}' });
    const award = await t.request({ method: 'POST', url: `${u}/award_emoji`, token: devToken, payload: { name: 'thumbsup' } });
    assert.equal(award.statusCode, 201, award.body);
    assert.equal(award.json().awardable_type, 'MergeRequest');
    const got = (await t.request({ method: 'GET', url: u, token: devToken })).json();
    assert.equal(got.upvotes, 1);
    assert.equal(got.user_notes_count, 5);
  });
});
