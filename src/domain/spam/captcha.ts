/**
 * CAPTCHA verification against a reCAPTCHA v2 compatible `siteverify` endpoint: a form POST of
 * `secret`, `response` and `remoteip`, answered with JSON `{"success": true|false, …}`
 * (developers.google.com/recaptcha/docs/verify). Only reCAPTCHA v2 is supported (spec,
 * Authentication: Spam handling).
 */
export interface CaptchaConfig {
  recaptchaSiteKey: string | null;
  recaptchaSecret: string | null;
  recaptchaVerifyUrl: string;
}

export interface CaptchaKeys {
  siteKey: string;
  secret: string;
  verifyUrl: string;
}

/** The CAPTCHA settings when both keys are configured, otherwise null (no CAPTCHA service). */
export function captchaKeys(config: CaptchaConfig): CaptchaKeys | null {
  if (!config.recaptchaSiteKey || !config.recaptchaSecret) return null;
  return { siteKey: config.recaptchaSiteKey, secret: config.recaptchaSecret, verifyUrl: config.recaptchaVerifyUrl };
}

const VERIFY_TIMEOUT_MS = 5000;

/** Whether the verifier accepts `response`; an unreachable or confused verifier counts as no. */
export async function verifyCaptcha(
  keys: CaptchaKeys, response: string, remoteIp: string | null,
): Promise<{ verified: boolean; error?: string }> {
  const form = new URLSearchParams({ secret: keys.secret, response });
  if (remoteIp) form.set('remoteip', remoteIp);
  try {
    const res = await fetch(keys.verifyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
    });
    if (!res.ok) return { verified: false, error: `verify endpoint answered ${res.status}` };
    const body = await res.json() as { success?: unknown };
    return { verified: body.success === true };
  } catch (e) {
    return { verified: false, error: (e as Error).message };
  }
}
