/**
 * Spam checkers: what decides whether user-written text is spam. The verdicts are the Service's
 * (app/services/spam/spam_constants.rb): `allow`, `disallow` (discard), `conditional_allow`
 * (allow once a CAPTCHA is solved). A checker only judges; checkSpam turns its verdict into a
 * spam log and a response.
 */
import type { UserRow } from '../../db/types.ts';

export type SpamVerdict = 'allow' | 'disallow' | 'conditional_allow';

export interface SpamSubject {
  user: UserRow;
  /** The text judged, e.g. a status message or snippet content. */
  text: string;
  title?: string | null;
  /** What is judged, as the Service names its models: `UserStatus`, `PersonalSnippet`, `User`. */
  noteableType: string;
}

export interface SpamChecker {
  check(subject: SpamSubject): Promise<SpamVerdict> | SpamVerdict;
}

/**
 * The default checker: text (or title) matching any configured pattern (KILN_SPAM_PATTERNS) is
 * spam. Spam may be retried with a CAPTCHA when one is configured, as the Service's verdict
 * service answers `conditional_allow` then, and is discarded otherwise.
 */
export function patternChecker(patterns: readonly RegExp[], captchaEnabled: boolean): SpamChecker {
  return {
    check({ text, title }) {
      const spam = patterns.some((p) => p.test(text) || (title ? p.test(title) : false));
      if (!spam) return 'allow';
      return captchaEnabled ? 'conditional_allow' : 'disallow';
    },
  };
}
