/**
 * SSHKey and SSHKeyWithUser (reference §2.1). `key` is the publishable key: the stored comment
 * (often an email address) is replaced by "<user name> (<instance host>)", as the Service does.
 */
import { Type, type Static } from 'typebox';
import type { UserRow } from '../../db/types.ts';
import type { KeyRow } from '../../db/tables/keys.ts';
import { UserPublicSchema } from './user.ts';

export const SSHKeySchema = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  created_at: Type.String(),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  key: Type.String(),
  usage_type: Type.String(),
}, { title: 'SSHKey' });

export const SSHKeyWithUserSchema = Type.Object({
  ...SSHKeySchema.properties,
  user: UserPublicSchema,
}, { title: 'SSHKeyWithUser' });

export type SSHKey = Static<typeof SSHKeySchema>;

export function publishableKey(key: string, owner: Pick<UserRow, 'name'>, externalUrl: string): string {
  const [algorithm, blob] = key.split(' ');
  return `${algorithm} ${blob} ${owner.name} (${new URL(externalUrl).hostname})`;
}

export function presentSshKey(row: KeyRow, owner: Pick<UserRow, 'name'>, externalUrl: string): SSHKey {
  return {
    id: row.id,
    title: row.title,
    created_at: row.created_at,
    expires_at: row.expires_at,
    key: publishableKey(row.key, owner, externalUrl),
    usage_type: row.usage_type,
  };
}
