/**
 * The commands git over SSH runs (src/git/ssh-server.ts parseGitCommand): git's three services on
 * one repository path, bare or single-quoted as git quotes it, and nothing else.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseGitCommand } from '../../src/git/ssh-server.ts';

describe('SSH git commands', () => {
  it('takes the three services in both spellings, with or without .git and the leading slash', () => {
    assert.deepEqual(parseGitCommand("git-upload-pack '/group/project.git'"), { service: 'git-upload-pack', path: 'group/project.git' });
    assert.deepEqual(parseGitCommand("git-receive-pack 'group/sub/project.git'"), { service: 'git-receive-pack', path: 'group/sub/project.git' });
    assert.deepEqual(parseGitCommand('git upload-archive group/project'), { service: 'git-upload-archive', path: 'group/project.git' });
    assert.deepEqual(parseGitCommand("git-upload-pack 'it'\\''s/p.git'"), { service: 'git-upload-pack', path: "it's/p.git" });
  });

  it('refuses anything else', () => {
    for (const command of [
      'ls', 'git-upload-pack', "git-upload-pack ''", "git-upload-pack 'a.git'; ls", 'git-upload-pack a.git b.git',
      "git-upload-pack 'a.git", 'git-upload-pack a"b.git', 'git-shell', 'git-lfs-authenticate a.git download',
      `git-upload-pack '${'a'.repeat(2000)}.git'`, "git-upload-pack 'a\u0000.git'", `git-upload-pack '${'a'.repeat(5000)}'`,
      "git upload-pack\t'a.git'", "git-upload-pack '/'",
    ]) {
      assert.equal(parseGitCommand(command), null, command);
    }
  });
});
