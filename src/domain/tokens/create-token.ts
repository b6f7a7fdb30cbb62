/**
 * Issuing a personal access or impersonation token for a user (the Service's PersonalAccessToken
 * validations, reference §2.4, §2.5, §9): a name, at least one scope, every scope one a token may
 * carry, and admin scopes (`sudo`) only for an administrator's token. The secret is returned once
 * and only its digest is stored.
 */
import type { Kysely } from 'kysely';
import type { DB, PersonalAccessTokenRow, UserRow } from '../../db/types.ts';
import { ADMIN_SCOPES, formatScopes, TOKEN_SCOPES } from '../auth/scopes.ts';
import { ValidationErrors } from '../validation-errors.ts';
import { digest, generateToken } from './secret.ts';
import { insertPersonalAccessToken } from './tokens.queries.ts';

export interface CreateTokenInput {
  name: string;
  scopes: string[];
  expiresAt: string | null;
  impersonation: boolean;
}

export type CreateTokenResult =
  | { ok: true; value: { row: PersonalAccessTokenRow; token: string } }
  | { ok: false; errors: Record<string, string[]> };

/** Scopes this user's tokens may carry: admin scopes only for administrators. */
export function availableScopesFor(user: Pick<UserRow, 'admin'>): readonly string[] {
  const admin = ADMIN_SCOPES as readonly string[];
  return user.admin === 1 ? TOKEN_SCOPES : TOKEN_SCOPES.filter((s) => !admin.includes(s));
}

export async function createToken(db: Kysely<DB>, owner: UserRow, input: CreateTokenInput): Promise<CreateTokenResult> {
  const errors = new ValidationErrors();
  const name = input.name.trim();
  const scopes = [...new Set(input.scopes.map((s) => s.trim()).filter(Boolean))];
  if (name === '') errors.add('name', "can't be blank");
  if (scopes.length === 0) errors.add('scopes', "can't be blank");
  const available = availableScopesFor(owner);
  if (!scopes.every((s) => available.includes(s))) errors.add('scopes', 'can only contain available scopes');
  if (!errors.empty) return { ok: false, errors: errors.errors };

  const token = generateToken();
  const row = await insertPersonalAccessToken(db, {
    userId: owner.id, name, tokenDigest: digest(token), scopes: formatScopes(scopes),
    impersonation: input.impersonation, expiresAt: input.expiresAt,
  });
  return { ok: true, value: { row, token } };
}

/** Rails' `errors.full_messages.to_sentence`: "Name can't be blank and Scopes can't be blank". */
export function fullMessagesSentence(errors: Record<string, string[]>): string {
  const messages = Object.entries(errors).flatMap(([attr, texts]) => {
    const human = attr.charAt(0).toUpperCase() + attr.slice(1).replace(/_/g, ' ');
    return texts.map((t) => `${human} ${t}`);
  });
  if (messages.length <= 2) return messages.join(' and ');
  return `${messages.slice(0, -1).join(', ')}, and ${messages[messages.length - 1]}`;
}
