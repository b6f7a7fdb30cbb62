/**
 * The Service's Application and ApplicationWithSecret entities (CONTRACT §4). The secret exists
 * only in the creation response: it is stored as a digest.
 */
import { Type } from 'typebox';
import type { OauthApplicationRow } from '../../db/types.ts';

export const ApplicationSchema = Type.Object({
  id: Type.Integer(),
  application_id: Type.String({ description: 'the client_id' }),
  application_name: Type.String(),
  callback_url: Type.String({ description: 'the redirect URIs, one per line' }),
  confidential: Type.Boolean(),
});

export const ApplicationWithSecretSchema = Type.Object({
  ...ApplicationSchema.properties,
  secret: Type.String({ description: 'the client secret, shown only once' }),
});

export function presentApplication(row: OauthApplicationRow) {
  return {
    id: row.id,
    application_id: row.uid,
    application_name: row.name,
    callback_url: row.redirect_uri,
    confidential: row.confidential === 1,
  };
}

export function presentApplicationWithSecret(row: OauthApplicationRow, secret: string) {
  return { ...presentApplication(row), secret };
}
