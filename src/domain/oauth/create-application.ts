/**
 * Registers an OAuth application (the /applications API and the /profile/applications page).
 * The uid is public; the secret is returned once and stored only as a digest
 * (RFC 9700 §2.5: client secrets are credentials; the Service hashes them too).
 */
import type { Kysely } from 'kysely';
import type { DB, OauthApplicationRow } from '../../db/types.ts';
import { OAUTH_SCOPES } from '../auth/scopes.ts';
import { digest, generateHexToken } from '../tokens/secret.ts';
import { insertApplication } from './oauth.queries.ts';
import { redirectUriProblem, splitRedirectUris } from './redirect-uris.ts';

export interface ApplicationInput {
  name: string;
  redirectUri: string;
  scopes: string[];
  confidential: boolean;
}

/** Registered redirect URIs, one per line, at most this many characters in all. */
const MAX_REDIRECT_URIS = 1_048_576;

export type ValidationErrors = Record<string, string[]>;

export type CreateApplicationResult =
  | { ok: true; value: { application: OauthApplicationRow; secret: string } }
  | { ok: false; errors: ValidationErrors };

/** The model validations of the Service's application, with its messages. */
export function validateApplication(input: ApplicationInput): ValidationErrors {
  const errors: ValidationErrors = {};
  const add = (field: string, message: string) => {
    const list = (errors[field] ??= []);
    if (!list.includes(message)) list.push(message);
  };
  if (input.name.trim() === '') add('name', "can't be blank");
  if (input.name.length > 255) add('name', 'is too long (maximum is 255 characters)');
  // The page's form is read without declared parameters: the API's bound on text (1 MiB) here too.
  const tooLong = input.redirectUri.length > MAX_REDIRECT_URIS;
  if (tooLong) add('redirect_uri', `is too long (maximum is ${MAX_REDIRECT_URIS} characters)`);
  const uris = tooLong ? [] : splitRedirectUris(input.redirectUri);
  if (!tooLong && uris.length === 0) add('redirect_uri', "can't be blank");
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) add('redirect_uri', problem);
  }
  if (input.scopes.length === 0) add('scopes', "can't be blank");
  else if (input.scopes.some((s) => !OAUTH_SCOPES.includes(s))) add('scopes', "doesn't match configured on the server.");
  return errors;
}

export async function createApplication(db: Kysely<DB>, input: ApplicationInput, ownerId: number | null): Promise<CreateApplicationResult> {
  const errors = validateApplication(input);
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const secret = generateHexToken();
  const application = await insertApplication(db, {
    name: input.name.trim(),
    uid: generateHexToken(),
    secretDigest: digest(secret),
    redirectUri: splitRedirectUris(input.redirectUri).join('\n'),
    scopes: [...new Set(input.scopes)].join(' '),
    confidential: input.confidential,
    ownerId,
  });
  return { ok: true, value: { application, secret } };
}
