/**
 * The provider's fixed numbers, each the Service's (reference gitlab-behavior §8.1) or Devise's
 * default, in one place so routes, pages and tests agree.
 */

/** `access_token_expires_in 7200`: two hours, for every application since 15.0. */
export const ACCESS_TOKEN_EXPIRES_IN = 7200;

/** Doorkeeper's `authorization_code_expires_in`: ten minutes (RFC 6749 §4.1.2 recommends ≤ 10). */
export const AUTHORIZATION_CODE_EXPIRES_IN = 600;

/** doorkeeper-openid_connect's default id_token `expiration`: 120 seconds. */
export const ID_TOKEN_EXPIRES_IN = 120;

/** Devise lockable: `maximum_attempts` 10, `unlock_in` 10 minutes. */
export const MAXIMUM_ATTEMPTS = 10;
export const UNLOCK_IN_MS = 10 * 60 * 1000;
