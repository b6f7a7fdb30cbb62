/** IssuePolicy (issue 29): confidential issues and locked discussions, asked of the policy directly. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canCommentOnIssue, canReadIssue, canUpdateIssue } from '../../../src/domain/issues/issue.policy.ts';
import type { Actor } from '../../../src/domain/permissions/access.ts';

const PUBLIC = { visibility_level: 20, archived: 0 };
const as = (id: number, accessLevel = 0, admin = 0): Actor => ({ user: { id, admin, external: 0 }, accessLevel });
const issue = (o: Partial<{ confidential: number; discussion_locked: number; assignee_ids: number[] }> = {}) => ({
  author_id: 1, confidential: 0, discussion_locked: null as number | null, assignee_ids: [] as number[], ...o,
});

describe('issue policy', () => {
  it('shows a confidential issue to Reporters and up, its author and assignees only', () => {
    const secret = issue({ confidential: 1, assignee_ids: [2] });
    assert.equal(canReadIssue(as(1), PUBLIC, secret), true);
    assert.equal(canReadIssue(as(2), PUBLIC, secret), true);
    assert.equal(canReadIssue(as(3), PUBLIC, secret), false);
    assert.equal(canReadIssue(as(3, 10), PUBLIC, secret), false);
    assert.equal(canReadIssue(as(3, 20), PUBLIC, secret), true);
    assert.equal(canReadIssue(as(3, 0, 1), PUBLIC, secret), true);
    assert.equal(canReadIssue({ user: null, accessLevel: 0 }, PUBLIC, secret), false);
  });

  it('lets authors and assignees edit their issue, Reporters any', () => {
    assert.equal(canUpdateIssue(as(1), PUBLIC, issue()), true);
    assert.equal(canUpdateIssue(as(3), PUBLIC, issue()), false);
    assert.equal(canUpdateIssue(as(3, 20), PUBLIC, issue()), true);
    assert.equal(canUpdateIssue(as(1), { ...PUBLIC, archived: 1 }, issue()), false);
  });

  it('takes comments on a locked discussion from members only', () => {
    const locked = issue({ discussion_locked: 1 });
    assert.equal(canCommentOnIssue(as(3), PUBLIC, locked), false);
    assert.equal(canCommentOnIssue(as(3, 10), PUBLIC, locked), true);
    assert.equal(canCommentOnIssue(as(3, 0, 1), PUBLIC, locked), true);
    assert.equal(canCommentOnIssue(as(3), PUBLIC, issue()), true);
  });
});
