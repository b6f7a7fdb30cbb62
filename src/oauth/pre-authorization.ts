/**
 * Validation of an authorization request, in Doorkeeper's order (reference oauth.md,
 * /oauth/authorize). Errors about the client or the redirect URI are shown to the user as a page
 * and never redirected, since the redirect target is not trustworthy then (RFC 6749 §4.1.2.1,
 * RFC 9700 §4.11); every later error goes back to the client's redirect URI with `state`.
 */
import type { Kysely } from 'kysely';
import type { DB, OauthApplicationRow } from '../db/types.ts';
import { findApplicationByUid } from '../domain/oauth/oauth.queries.ts';
import { redirectUriRegistered } from '../domain/oauth/redirect-uris.ts';
import { missingParam, OAUTH_MESSAGES, type OAuthErrorCode } from './errors.ts';
import { isCodeChallengeMethod, type CodeChallengeMethod } from './pkce.ts';
import { defaultScopes, scopesAllowed, splitScopes } from './scopes.ts';
import type { ConsentRequest } from '../web/pages/consent.ts';

export type PreAuthorization =
  | { kind: 'page'; error: OAuthErrorCode; description: string }
  | { kind: 'redirect'; error: OAuthErrorCode; description: string; redirectUri: string; state?: string; fragment: boolean }
  | {
    kind: 'ok';
    application: OauthApplicationRow;
    redirectUri: string;
    scopes: string[];
    state?: string;
    codeChallenge: string | null;
    codeChallengeMethod: CodeChallengeMethod | null;
    nonce: string | null;
    /** The request as the consent forms resend it. */
    request: ConsentRequest;
  };

const MAX_NONCE = 255;

export async function preAuthorize(db: Kysely<DB>, param: (name: string) => string | undefined): Promise<PreAuthorization> {
  const page = (error: OAuthErrorCode, description: string = OAUTH_MESSAGES[error]): PreAuthorization =>
    ({ kind: 'page', error, description });
  const clientId = param('client_id');
  if (!clientId) return page('invalid_request', missingParam('client_id'));
  const application = await findApplicationByUid(db, clientId);
  if (!application) return page('invalid_client');
  const redirectUri = param('redirect_uri');
  if (!redirectUri || !redirectUriRegistered(application.redirect_uri, redirectUri)) return page('invalid_redirect_uri');

  const state = param('state');
  const responseType = param('response_type');
  const back = (error: OAuthErrorCode, description: string = OAUTH_MESSAGES[error]): PreAuthorization =>
    // The removed implicit flow answered in the fragment; its refusal is answered there too.
    ({ kind: 'redirect', error, description, redirectUri, state, fragment: responseType === 'token' });

  const applicationScopes = splitScopes(application.scopes);
  const requested = param('scope');
  const scopes = requested !== undefined ? splitScopes(requested) : defaultScopes(applicationScopes);
  if (!responseType) return back('invalid_request', missingParam('response_type'));
  if (scopes.length === 0) return back('invalid_request', missingParam('scope'));
  // Only the authorization code flow: the implicit grant was removed in 15.0 (spec, Deprecations).
  if (responseType !== 'code') return back('unsupported_response_type');
  const responseMode = param('response_mode');
  if (responseMode !== undefined && responseMode !== 'query') return back('unsupported_response_mode');
  if (!scopesAllowed(scopes, applicationScopes)) return back('invalid_scope');

  const codeChallenge = param('code_challenge') ?? null;
  const method = param('code_challenge_method');
  if (codeChallenge !== null && (method === undefined || !isCodeChallengeMethod(method))) return back('invalid_code_challenge_method');
  if (codeChallenge !== null && !/^[A-Za-z0-9\-._~]{43,128}$/.test(codeChallenge)) {
    return back('invalid_request', 'The code challenge is invalid.');
  }
  const codeChallengeMethod = codeChallenge !== null ? method as CodeChallengeMethod : null;
  // The nonce is stored with the code until the token request puts it in the id_token: bounded as
  // the other stored strings (OpenID Connect Core §3.1.2.1 sets no length; clients send 16-64).
  const nonce = param('nonce') ?? null;
  if (nonce !== null && nonce.length > MAX_NONCE) return back('invalid_request', 'The nonce is invalid.');

  return {
    kind: 'ok', application, redirectUri, scopes, state, codeChallenge, codeChallengeMethod, nonce,
    request: {
      client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: scopes.join(' '),
      ...(state !== undefined ? { state } : {}),
      ...(codeChallenge !== null ? { code_challenge: codeChallenge, code_challenge_method: codeChallengeMethod! } : {}),
      ...(nonce !== null ? { nonce } : {}),
    },
  };
}

/** The redirect URI with the response parameters added (query, or fragment for response_type=token). */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>, fragment = false): string {
  const url = new URL(redirectUri);
  if (fragment) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined) p.set(k, v);
    url.hash = p.toString();
  } else {
    for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  }
  return url.toString();
}
