/**
 * checkSpam: the one entry point for every user-writable text in scope (status message now; the
 * user bio and snippet content call it the same way), as the Service's Spam::SpamActionService:
 *
 * 1. A retry carrying a CAPTCHA response for one of the user's own pending spam logs is verified
 *    against the configured verifier; when it passes, the log is marked verified and the text is
 *    accepted without judging it again.
 * 2. Internal users and service users are not checked (the Service's allowlist).
 * 3. Otherwise the checker judges the text. Spam gets a spam log and is refused: discarded without
 *    a CAPTCHA service, or sent back for a CAPTCHA with one (spec, Authentication: Spam handling).
 *
 * The messages are the Service's (app/models/concerns/spammable.rb), naming what was judged.
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { Config } from '../../config/schema.ts';
import { isInternal, USER_TYPES } from '../users/user-kind.ts';
import { captchaKeys, verifyCaptcha } from './captcha.ts';
import { patternChecker, type SpamChecker } from './checker.ts';
import { findPendingSpamLog, insertSpamLog, markRecaptchaVerified } from './spam.queries.ts';

export interface SpamContext {
  db: Kysely<DB>;
  config: Pick<Config, 'spamPatterns' | 'recaptchaSiteKey' | 'recaptchaSecret' | 'recaptchaVerifyUrl'>;
}

export interface SpamCheckInput {
  user: UserRow;
  text: string;
  title?: string | null;
  /** The model name the spam log records, e.g. `UserStatus`. */
  noteableType: string;
  /** How the message names it, e.g. `user status`, `snippet`. */
  entityName: string;
  /** The request's client, recorded in the spam log and sent to the verifier. */
  source: { ip: string | null; userAgent: string | null };
  /** From the X-Service-Captcha-Response and X-Service-Spam-Log-Id headers of a retry. */
  captcha?: { response: string | null; spamLogId: number | null };
  /** Replaces the configured checker (KILN_SPAM_PATTERNS). */
  checker?: SpamChecker;
}

export type SpamCheckResult =
  | { ok: true; captchaVerified: boolean }
  | { ok: false; reason: 'spam'; message: string }
  | { ok: false; reason: 'needs_captcha'; message: string; spamLogId: number; captchaSiteKey: string };

export const discardedMessage = (entityName: string) => `Your ${entityName} has been recognized as spam and has been discarded.`;
export const needsCaptchaMessage = (entityName: string) =>
  `Your ${entityName} has been recognized as spam. Please, change the content or solve the reCAPTCHA to proceed.`;

/** The default checker of a configuration. */
export function configuredChecker(config: SpamContext['config']): SpamChecker {
  return patternChecker(config.spamPatterns, captchaKeys(config) !== null);
}

export async function checkSpam(ctx: SpamContext, input: SpamCheckInput): Promise<SpamCheckResult> {
  const keys = captchaKeys(ctx.config);
  const { response, spamLogId } = input.captcha ?? { response: null, spamLogId: null };
  if (keys && response && spamLogId !== null) {
    const log = await findPendingSpamLog(ctx.db, spamLogId, input.user.id);
    if (log) {
      const { verified } = await verifyCaptcha(keys, response, input.source.ip);
      if (verified && await markRecaptchaVerified(ctx.db, log.id, input.user.id)) return { ok: true, captchaVerified: true };
    }
  }
  if (isInternal(input.user) || input.user.user_type === USER_TYPES.service_user) return { ok: true, captchaVerified: false };

  const checker = input.checker ?? configuredChecker(ctx.config);
  const verdict = await checker.check({ user: input.user, text: input.text, title: input.title, noteableType: input.noteableType });
  if (verdict === 'allow') return { ok: true, captchaVerified: false };

  const log = await insertSpamLog(ctx.db, {
    userId: input.user.id, title: input.title ?? null, description: input.text,
    sourceIp: input.source.ip, userAgent: input.source.userAgent, noteableType: input.noteableType,
  });
  // conditional_allow needs a CAPTCHA service to be solvable; without one it is plain spam.
  if (verdict === 'conditional_allow' && keys) {
    return {
      ok: false, reason: 'needs_captcha', message: needsCaptchaMessage(input.entityName), spamLogId: log.id,
      captchaSiteKey: keys.siteKey,
    };
  }
  return { ok: false, reason: 'spam', message: discardedMessage(input.entityName) };
}
