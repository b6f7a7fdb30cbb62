/**
 * The integrations' own rules (issue 31, item 9): which Asana tasks a commit message mentions and
 * which it closes (the Service's asana.rb issue_finder), the emails-on-push subject
 * (Emails::RepositoryPush#subject) and branch choices, and no mail at all without KILN_SMTP_URL.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { taskMentions } from '../../src/domain/integrations/asana.ts';
import { executeEmailsOnPush, notifiesBranch, pushSubject, recipientList, type MailPush } from '../../src/domain/integrations/emails-on-push.ts';

const ZERO = '0'.repeat(40);
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

function push(o: Partial<MailPush> = {}): MailPush {
  const commit = (title: string) => ({
    id: B, title, message: title, url: 'http://x/c', timestamp: '2026-01-01T00:00:00Z', author: { name: 'Ada', email: 'ada@example.com' },
  });
  return {
    ref: 'refs/heads/main', before: A, after: B, user_name: 'Ada',
    project: { path_with_namespace: 'g/p', web_url: 'http://x/g/p', default_branch: 'main' },
    commits: [commit('First'), commit('Second')], total_commits_count: 2, ...o,
  };
}

describe('integrations', () => {
  it('finds the Asana tasks a message mentions, and those a fix or close keyword completes', () => {
    assert.deepEqual(taskMentions('Refs #12 and fixes #34'), [{ taskId: '12', close: false }, { taskId: '34', close: true }]);
    assert.deepEqual(taskMentions('Closing https://app.asana.com/0/111/222'), [{ taskId: '222', close: true }]);
    assert.deepEqual(taskMentions('closes: #9'), [{ taskId: '9', close: true }]);
    assert.deepEqual(taskMentions('no task here'), []);
  });

  it('words the subject as the Service does', () => {
    assert.equal(pushSubject(push()), '[Git][g/p][main] 2 commits: First');
    assert.equal(pushSubject(push({ commits: push().commits.slice(0, 1) })), '[Git][g/p][main] First');
    assert.equal(pushSubject(push({ before: ZERO })), '[Git][g/p] Pushed new branch main');
    assert.equal(pushSubject(push({ after: ZERO, commits: [] })), '[Git][g/p] Deleted branch main');
    assert.equal(pushSubject(push({ ref: 'refs/tags/v1', before: ZERO })), '[Git][g/p] Pushed new tag v1');
  });

  it('notifies the chosen branches and splits the recipients', () => {
    assert.equal(notifiesBranch('all', 'x', 'main', []), true);
    assert.equal(notifiesBranch('default', 'x', 'main', []), false);
    assert.equal(notifiesBranch('default', 'main', 'main', []), true);
    assert.equal(notifiesBranch('protected', 'release-1', 'main', ['release-*']), true);
    assert.equal(notifiesBranch('default_and_protected', 'x', 'main', ['release-*']), false);
    assert.deepEqual(recipientList('a@x.com, b@x.com\nc@x.com'), ['a@x.com', 'b@x.com', 'c@x.com']);
  });

  it('sends nothing without KILN_SMTP_URL', async () => {
    const sent = await executeEmailsOnPush(
      { smtpUrl: null, from: 'kiln@x', externalUrl: 'http://x' }, '/nonexistent', { recipients: 'a@x.com' }, push(), [],
    );
    assert.equal(sent, false);
  });
});
