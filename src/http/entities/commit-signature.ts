/**
 * The Service's CommitSignature entity for a PGP signature (lib/api/entities/commit_signature.rb
 * merging gpg_commit_signature.rb, 15.2): its type, the GpgCommitSignature fields, and where the
 * commit was read (`commit_source`, the Service's wire value for its git service).
 */
import { Type, type Static } from 'typebox';
import type { CommitSignature } from '../../domain/gpg-keys/commit-signature.ts';

const NString = Type.Union([Type.String(), Type.Null()]);
const NInteger = Type.Union([Type.Integer(), Type.Null()]);

export const CommitSignatureSchema = Type.Object({
  signature_type: Type.String(),
  verification_status: Type.String(),
  gpg_key_id: NInteger,
  gpg_key_primary_keyid: Type.String(),
  gpg_key_user_name: NString,
  gpg_key_user_email: NString,
  gpg_key_subkey_id: NInteger,
  commit_source: Type.String(),
}, { title: 'CommitSignature' });
export type CommitSignatureEntity = Static<typeof CommitSignatureSchema>;

export function presentCommitSignature(s: CommitSignature): CommitSignatureEntity {
  return {
    signature_type: 'PGP', verification_status: s.verificationStatus, gpg_key_id: s.gpgKeyId,
    gpg_key_primary_keyid: s.gpgKeyPrimaryKeyid, gpg_key_user_name: s.gpgKeyUserName, gpg_key_user_email: s.gpgKeyUserEmail,
    gpg_key_subkey_id: s.gpgKeySubkeyId, commit_source: 'gitaly',
  };
}
