/**
 * Which scopes a request gets (Doorkeeper's ScopeChecker with `enforce_configured_scopes`): every
 * requested scope must be one the server offers and, with an application, one the application
 * was registered with. An omitted scope means the server default (`api`, reference §9)
 * intersected with the application's scopes.
 */
import { DEFAULT_SCOPES, OAUTH_SCOPES } from '../domain/auth/scopes.ts';

export function splitScopes(value: string): string[] {
  return [...new Set(value.split(/\s+/).filter(Boolean))];
}

/** The scopes an omitted `scope` parameter stands for. */
export function defaultScopes(applicationScopes: string[] | null): string[] {
  return applicationScopes === null ? [...DEFAULT_SCOPES] : DEFAULT_SCOPES.filter((s) => applicationScopes.includes(s));
}

export function scopesAllowed(requested: string[], applicationScopes: string[] | null): boolean {
  return requested.length > 0
    && requested.every((s) => OAUTH_SCOPES.includes(s) && (applicationScopes === null || applicationScopes.includes(s)));
}
