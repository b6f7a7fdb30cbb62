/**
 * The HTTP side of the spam check (spec, Authentication: Spam handling): reads the retry headers
 * X-Service-Captcha-Response and X-Service-Spam-Log-Id, runs checkSpam, and turns a refusal into
 * the Service's bodies (app/controllers/concerns/spammable_actions/captcha_check/
 * rest_api_actions_support.rb):
 * - without a CAPTCHA service: 400 `{"message":{"error":"Your … has been recognized as spam and has been discarded."}}`;
 * - with one: 409 `{"needs_captcha_response":true,"spam_log_id":N,"captcha_site_key":"…","message":{"error":"…"}}`.
 * Routes call `rejectSpam(request, …)` before writing user-written text.
 */
import type { FastifyRequest } from 'fastify';
import type { UserRow } from '../db/types.ts';
import { checkSpam } from '../domain/spam/check-spam.ts';
import type { SpamChecker } from '../domain/spam/checker.ts';
import { ApiError, validationFailed } from './errors.ts';

export const CAPTCHA_RESPONSE_HEADER = 'x-service-captcha-response';
export const SPAM_LOG_ID_HEADER = 'x-service-spam-log-id';

function header(request: FastifyRequest, name: string): string | null {
  const v = request.headers[name];
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}

export interface RejectSpamOptions {
  user: UserRow;
  text: string;
  title?: string | null;
  noteableType: string;
  entityName: string;
  checker?: SpamChecker;
}

/** Throws the Service's spam answer when the text is judged spam; returns when it may be saved. */
export async function rejectSpam(request: FastifyRequest, o: RejectSpamOptions): Promise<void> {
  const rawLogId = header(request, SPAM_LOG_ID_HEADER);
  const spamLogId = rawLogId !== null && /^\d{1,10}$/.test(rawLogId) ? Number(rawLogId) : null;
  const result = await checkSpam(request.server.kiln, {
    ...o,
    source: { ip: request.ip ?? null, userAgent: header(request, 'user-agent') },
    captcha: { response: header(request, CAPTCHA_RESPONSE_HEADER), spamLogId },
  });
  if (result.ok) return;
  if (result.reason === 'spam') throw validationFailed({ error: result.message });
  // 409: the request may be repeated once the CAPTCHA is solved (the Service's choice of status).
  throw new ApiError(409, {
    needs_captcha_response: true,
    spam_log_id: result.spamLogId,
    captcha_site_key: result.captchaSiteKey,
    message: { error: result.message },
  });
}
