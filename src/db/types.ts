/**
 * One interface per table, as the migrations leave it. Timestamps are ISO-8601 UTC strings,
 * dates "YYYY-MM-DD", booleans 0/1 (see database.ts).
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export type Flag = 0 | 1;

export interface UsersTable {
  id: Generated<number>;
  username: string;
  email: string;
  name: string;
  state: Generated<string>;
  user_type: Generated<number>;
  admin: Generated<Flag>;
  external: Generated<Flag>;
  encrypted_password: string | null;
  password_automatically_set: Generated<Flag>;
  password_expires_at: string | null;
  bio: Generated<string>;
  location: Generated<string>;
  public_email: string | null;
  commit_email: string | null;
  skype: Generated<string>;
  linkedin: Generated<string>;
  twitter: Generated<string>;
  discord: Generated<string>;
  website_url: Generated<string>;
  organization: Generated<string>;
  job_title: Generated<string>;
  pronouns: string | null;
  timezone: string | null;
  private_profile: Generated<Flag>;
  projects_limit: Generated<number>;
  can_create_group: Generated<Flag>;
  theme_id: Generated<number>;
  color_scheme_id: Generated<number>;
  note: string | null;
  avatar: string | null;
  confirmed_at: string | null;
  otp_required_for_login: Generated<Flag>;
  sign_in_count: Generated<number>;
  failed_attempts: Generated<number>;
  locked_at: string | null;
  current_sign_in_at: string | null;
  last_sign_in_at: string | null;
  current_sign_in_ip: string | null;
  last_sign_in_ip: string | null;
  last_activity_on: string | null;
  created_by_id: number | null;
  created_at: string;
  updated_at: string;
}
export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;

export interface NamespacesTable {
  id: Generated<number>;
  name: string;
  path: string;
  kind: 'user' | 'group';
  owner_id: number | null;
  parent_id: number | null;
  description: Generated<string>;
  visibility_level: Generated<number>;
  created_at: string;
  updated_at: string;
}
export type NamespaceRow = Selectable<NamespacesTable>;

export interface PersonalAccessTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  token_digest: string;
  scopes: string;
  impersonation: Generated<Flag>;
  revoked: Generated<Flag>;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
}
export type PersonalAccessTokenRow = Selectable<PersonalAccessTokensTable>;

export interface OauthApplicationsTable {
  id: Generated<number>;
  name: string;
  uid: string;
  secret_digest: string;
  redirect_uri: string;
  scopes: Generated<string>;
  confidential: Generated<Flag>;
  trusted: Generated<Flag>;
  owner_id: number | null;
  created_at: string;
  updated_at: string;
}
export type OauthApplicationRow = Selectable<OauthApplicationsTable>;

export interface OauthAccessTokensTable {
  id: Generated<number>;
  application_id: number | null;
  resource_owner_id: number;
  token_digest: string;
  refresh_token_digest: string | null;
  previous_refresh_token_digest: string | null;
  scopes: string;
  expires_in: number | null;
  revoked_at: string | null;
  created_at: string;
}
export type OauthAccessTokenRow = Selectable<OauthAccessTokensTable>;

export interface SessionsTable {
  id: Generated<number>;
  session_digest: string;
  user_id: number;
  created_at: string;
  expires_at: string;
}

export interface IdentitiesTable {
  id: Generated<number>;
  user_id: number;
  provider: string;
  extern_uid: string;
  saml_provider_id: number | null;
  created_at: string;
}
export type IdentityRow = Selectable<IdentitiesTable>;

export interface UserFollowsTable {
  follower_id: number;
  followee_id: number;
  created_at: string;
}

export interface UserCustomAttributesTable {
  id: Generated<number>;
  user_id: number;
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
}

export interface AppSecretsTable {
  name: string;
  value: string;
  created_at: string;
}

export interface DB {
  users: UsersTable;
  namespaces: NamespacesTable;
  personal_access_tokens: PersonalAccessTokensTable;
  oauth_applications: OauthApplicationsTable;
  oauth_access_tokens: OauthAccessTokensTable;
  sessions: SessionsTable;
  identities: IdentitiesTable;
  user_follows: UserFollowsTable;
  user_custom_attributes: UserCustomAttributesTable;
  app_secrets: AppSecretsTable;
}
