/**
 * The decisions of src/domain/protected-refs/ (issue 30, item 3): the Service's RefMatcher (a `*`
 * covers any run of characters, `/` included, and nothing else is special) and UserAccess's
 * answers for push, merge, force push, deletion and tags.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { refMatches } from '../../src/domain/protected-refs/ref-matcher.ts';
import {
  canCreateTag, canDeleteBranch, canDeleteTag, canForcePushToBranch, canMergeToBranch, canPushToBranch, isProtectedRef,
  type ProtectionRules, type RefActor,
} from '../../src/domain/protected-refs/ref-rules.ts';

const developer: RefActor = { admin: false, accessLevel: 30, canPushCode: true };
const maintainer: RefActor = { admin: false, accessLevel: 40, canPushCode: true };
const admin: RefActor = { admin: true, accessLevel: 0, canPushCode: true };
const reporter: RefActor = { admin: false, accessLevel: 20, canPushCode: false };

const rules: ProtectionRules = {
  branches: [
    { name: 'main', allowForcePush: false, push: [40], merge: [30] },
    { name: 'release/*', allowForcePush: true, push: [30], merge: [40] },
    { name: 'frozen', allowForcePush: false, push: [0], merge: [0] },
  ],
  tags: [{ name: 'v*', create: [40] }],
  defaultBranchProtected: true,
};

describe('protected refs', () => {
  it('matches names and wildcards as the Service\'s RefMatcher', () => {
    assert.equal(refMatches('main', 'main'), true);
    assert.equal(refMatches('main', 'main2'), false);
    assert.equal(refMatches('release/*', 'release/1.0/hotfix'), true);
    assert.equal(refMatches('release/*', 'release/'), true);
    assert.equal(refMatches('release/*', 'releases/1'), false);
    assert.equal(refMatches('*-stable', 'x/y-stable'), true);
    assert.equal(refMatches('v1.*', 'v1x2'), false);
    assert.equal(refMatches('v1.*', 'v1.2'), true);
    assert.equal(refMatches('a*b*c', 'a-b-c'), true);
    assert.equal(refMatches('(x)+*', '(x)+1'), true);
    assert.equal(refMatches('*', 'anything/at/all'), true);
  });

  it('answers push, merge, force push and deletion by the covering patterns', () => {
    assert.equal(canPushToBranch(rules, developer, 'main'), false);
    assert.equal(canMergeToBranch(rules, developer, 'main'), true);
    assert.equal(canPushToBranch(rules, maintainer, 'main'), true);
    assert.equal(canPushToBranch(rules, developer, 'release/2'), true);
    assert.equal(canMergeToBranch(rules, developer, 'release/2'), false);
    assert.equal(canPushToBranch(rules, developer, 'topic'), true);
    assert.equal(canPushToBranch(rules, reporter, 'topic'), false);
    assert.equal(canPushToBranch(rules, null, 'topic'), false);
    // "No one" admits nobody, administrators included; otherwise administrators pass.
    assert.equal(canPushToBranch(rules, admin, 'frozen'), false);
    assert.equal(canPushToBranch(rules, admin, 'main'), true);
    assert.equal(canForcePushToBranch(rules, maintainer, 'main'), false);
    assert.equal(canForcePushToBranch(rules, developer, 'release/2'), true);
    assert.equal(canForcePushToBranch(rules, developer, 'topic'), true);
    assert.equal(canDeleteBranch(rules, developer, 'release/2'), false);
    assert.equal(canDeleteBranch(rules, maintainer, 'release/2'), true);
    assert.equal(canDeleteBranch(rules, developer, 'topic'), true);
    // An empty repository whose default branch is protected: only Maintainers push its first branch.
    assert.equal(canPushToBranch(rules, developer, 'anything', { emptyRepo: true }), false);
    assert.equal(canPushToBranch(rules, maintainer, 'anything', { emptyRepo: true }), true);
    assert.equal(canPushToBranch({ ...rules, defaultBranchProtected: false }, developer, 'anything', { emptyRepo: true }), true);
  });

  it('answers tags and protected refs', () => {
    assert.equal(canCreateTag(rules, developer, 'v1.0'), false);
    assert.equal(canCreateTag(rules, maintainer, 'v1.0'), true);
    assert.equal(canCreateTag(rules, developer, 'nightly'), true);
    assert.equal(canDeleteTag(rules, maintainer, 'v1.0'), false);
    assert.equal(canDeleteTag(rules, developer, 'nightly'), true);
    assert.equal(isProtectedRef(rules, 'release/9', false), true);
    assert.equal(isProtectedRef(rules, 'v2', true), true);
    assert.equal(isProtectedRef(rules, 'v2', false), false);
    assert.equal(isProtectedRef(rules, 'main', true), false);
  });
});
