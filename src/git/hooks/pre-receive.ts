/**
 * The pre-receive check of a push over smart HTTP (the Service's Gitlab::Checks::BranchCheck and
 * TagCheck, which its pre-receive hook asks through /internal/allowed). kiln decides who pushes
 * and what protects the project before receive-pack starts (smart-http.ts) and writes that to the
 * file KILN_PUSH_ACCESS names; git runs this program with the pushed objects quarantined and the
 * ref changes on stdin (`<old> <new> <ref>` per line). The same decision functions as the API's
 * (src/domain/protected-refs/ref-rules.ts) judge each change; the first refusal is printed (git
 * shows it as `remote: …`) and refuses the whole push, as the Service's hook does.
 *
 * A push that passes then runs the repository's own `hooks/pre-receive`, if it has one, as the
 * Service runs a repository's server hooks after its own check: kiln points core.hooksPath here,
 * and the repository's hooks keep working (the other hooks of this directory hand over to the repository's own likewise).
 */
import fs from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import {
  isProtectedBranch, PUSH_CODE_DENIED, refChangeRefusal, type ProtectionRules, type RefActor, type RepositoryState,
} from '../../domain/protected-refs/ref-rules.ts';

/** What smart-http.ts hands over (pushAccessFile). */
export interface PushAccess {
  rules: ProtectionRules;
  actor: RefActor | null;
  state: RepositoryState;
  defaultBranch: string | null;
  emptyRepoMessage: string;
  /** The branches a pusher without push_code may change as a merge request's collaborator (Project#branch_allows_collaboration?). */
  collaborationBranches: string[];
}

/**
 * Gitlab::Checks::PushCheck: someone without push_code (let in because a merge request allows
 * collaboration, git-access.ts) may change only the branches such a request names. kiln refuses
 * them tags and other refs too, which the Service's check lets through for want of a branch name.
 */
function pushCheckRefusal(access: PushAccess, ref: string): string | null {
  if (access.actor?.canPushCode) return null;
  const branch = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null;
  return branch !== null && access.collaborationBranches.includes(branch) ? null : PUSH_CODE_DENIED;
}

function git(args: string[]): string {
  return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 });
}

async function main(): Promise<number> {
  const file = process.env.KILN_PUSH_ACCESS;
  if (!file) {
    process.stderr.write('The push could not be checked.\n');
    return 1;
  }
  const access = JSON.parse(fs.readFileSync(file, 'utf8')) as PushAccess;
  const input = fs.readFileSync(0, 'utf8');
  for (const line of input.split('\n')) {
    const [oldrev, newrev, ref] = line.trim().split(' ');
    if (!ref) continue;
    const refusal = pushCheckRefusal(access, ref) ?? await refChangeRefusal(access.rules, access.actor, access.state, {
      ref, oldrev, newrev, protocol: 'http', defaultBranch: access.defaultBranch, emptyRepoMessage: access.emptyRepoMessage,
      // Gitlab::Checks::ForcePush: a commit of the old value that the new one does not contain.
      forced: async () => git(['rev-list', '--max-count=1', oldrev, `^${newrev}`]).trim() !== '',
      newCommitOnProtectedBranch: async () => git(['for-each-ref', '--contains', newrev, '--format=%(refname:strip=2)', 'refs/heads/'])
        .split('\n').some((b) => b !== '' && isProtectedBranch(access.rules, b)),
    });
    if (refusal) {
      process.stderr.write(`${refusal}\n`);
      return 1;
    }
  }
  return ownHook(input);
}

/** The repository's own pre-receive hook (git runs hooks in the repository's directory), fed the same changes. */
function ownHook(input: string): Promise<number> {
  const own = 'hooks/pre-receive';
  try {
    fs.accessSync(own, fs.constants.X_OK);
  } catch {
    return Promise.resolve(0);
  }
  return new Promise((resolve) => {
    const child = spawn(`./${own}`, [], { stdio: ['pipe', 'inherit', 'inherit'] });
    child.on('error', () => resolve(1));
    child.on('close', (code) => resolve(code ?? 1));
    child.stdin.on('error', () => { /* the hook did not read its input; its exit code decides */ });
    child.stdin.end(input);
  });
}

main().then((code) => process.exit(code), (err: unknown) => {
  process.stderr.write(`The push could not be checked: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
