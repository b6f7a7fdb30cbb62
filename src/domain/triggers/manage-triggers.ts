/**
 * Pipeline trigger tokens of a project (Ci::Trigger, lib/api/ci/triggers.rb 15.2): created with a
 * description by a Maintainer, who becomes the owner. The token is `glptt-` and 40 hex digits
 * from the CSPRNG. The Service shows the whole token to its owner on every read and only its
 * first four characters to anyone else, so kiln keeps it sealed (AES-256-GCM, like variable
 * values) besides the SHA-256 digest that finds it when it is used.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { CiTriggerRow } from '../../db/tables/ci-variables.ts';
import { digest } from '../tokens/secret.ts';
import type { Sealer } from '../ci-variables/encryption.ts';
import { ValidationErrors } from '../validation-errors.ts';
import { insertTrigger } from './triggers.queries.ts';

export const TRIGGER_TOKEN_PREFIX = 'glptt-';
export const MAX_DESCRIPTION = 255;

export function descriptionErrors(description: string): Record<string, string[]> | null {
  const errors = new ValidationErrors();
  if (description.length > MAX_DESCRIPTION) errors.add('description', `is too long (maximum is ${MAX_DESCRIPTION} characters)`);
  if (description.includes('\0')) errors.add('description', 'is invalid');
  return errors.empty ? null : errors.errors;
}

export async function createTrigger(
  db: Kysely<DB>, sealer: Sealer, projectId: number, ownerId: number, description: string,
): Promise<{ row: CiTriggerRow; token: string }> {
  const token = `${TRIGGER_TOKEN_PREFIX}${crypto.randomBytes(20).toString('hex')}`;
  const row = await insertTrigger(db, {
    project_id: projectId, owner_id: ownerId, description, token_digest: digest(token),
    encrypted_token: sealer.seal(token),
  });
  return { row, token };
}

/** What others see of a token (Ci::Trigger#short_token): four characters after the prefix. */
export function shortToken(token: string): string {
  return token.startsWith(TRIGGER_TOKEN_PREFIX) ? token.slice(
    TRIGGER_TOKEN_PREFIX.length, TRIGGER_TOKEN_PREFIX.length + 4,
  ) : token.slice(0, 4);
}
