/**
 * The user entities of the Service, by inheritance as its presenters build them (reference §1.3):
 * UserBasic → User → UserPublic → UserWithAdmin → UserDetailsWithAdmin. Each level is a TypeBox
 * schema (response serialisation and OpenAPI) and a present function that adds its fields to the
 * level below. Which level a viewer gets is the route's decision.
 */
import { Type, type Static } from 'typebox';
import type { UserRow } from '../../db/types.ts';
import { isBot } from '../../domain/users/user-kind.ts';
import { flat } from './serializers.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const NString = Nullable(Type.String());

export const UserBasicSchema = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  name: Type.String(),
  state: Type.String(),
  avatar_url: NString,
  web_url: Type.String(),
  custom_attributes: Type.Optional(Type.Array(Type.Object({ key: Type.String(), value: Type.String() }))),
}, { title: 'UserBasic' });

export const UserSchema = Type.Object({
  ...UserBasicSchema.properties,
  created_at: Type.Optional(Type.String()),
  bio: Type.String(),
  location: Type.String(),
  public_email: NString,
  skype: Type.String(),
  linkedin: Type.String(),
  twitter: Type.String(),
  discord: Type.String(),
  website_url: Type.String(),
  organization: Type.String(),
  job_title: Type.String(),
  pronouns: NString,
  bot: Type.Boolean(),
  work_information: NString,
  followers: Type.Optional(Type.Integer()),
  following: Type.Optional(Type.Integer()),
  is_followed: Type.Optional(Type.Boolean()),
  local_time: NString,
}, { title: 'User' });

export const IdentitySchema = Type.Object({
  provider: Type.String(),
  extern_uid: Type.String(),
  saml_provider_id: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
});

export const UserPublicSchema = Type.Object({
  ...UserSchema.properties,
  last_sign_in_at: NString,
  confirmed_at: NString,
  last_activity_on: NString,
  email: Type.String(),
  theme_id: Type.Integer(),
  color_scheme_id: Type.Integer(),
  projects_limit: Type.Integer(),
  current_sign_in_at: NString,
  identities: Type.Array(IdentitySchema),
  can_create_group: Type.Boolean(),
  can_create_project: Type.Boolean(),
  two_factor_enabled: Type.Boolean(),
  external: Type.Boolean(),
  private_profile: Type.Boolean(),
  commit_email: Type.String(),
}, { title: 'UserPublic' });

export const UserWithAdminSchema = Type.Object({
  ...UserPublicSchema.properties,
  is_admin: Type.Boolean(),
  note: NString,
  namespace_id: Type.Union([Type.Integer(), Type.Null()]),
}, { title: 'UserWithAdmin' });

export const UserDetailsWithAdminSchema = Type.Object({
  ...UserWithAdminSchema.properties,
  highest_role: Type.Integer(),
  current_sign_in_ip: NString,
  last_sign_in_ip: NString,
  sign_in_count: Type.Integer(),
}, { title: 'UserDetailsWithAdmin' });

export type UserBasic = Static<typeof UserBasicSchema>;
export type User = Static<typeof UserSchema>;
export type UserPublic = Static<typeof UserPublicSchema>;
export type UserWithAdmin = Static<typeof UserWithAdminSchema>;
export type UserDetailsWithAdmin = Static<typeof UserDetailsWithAdminSchema>;

/** What the presenters need beyond the row; loaded by the route in as few queries as it can. */
export interface UserExtras {
  /** Follower counts; omitted from the entity when the viewer may not read the profile. */
  followers?: number;
  following?: number;
  /** Set only when there is a current user. */
  isFollowed?: boolean;
  identities?: { provider: string; extern_uid: string; saml_provider_id: number | null }[];
  customAttributes?: { key: string; value: string }[];
  namespaceId?: number | null;
  highestRole?: number;
}

export interface PresentOptions {
  externalUrl: string;
  /** Whether the viewer may read the profile (public profile, self, or administrator). */
  canReadProfile: boolean;
}

/** The columns UserBasic is made of: lists of users for non-administrators read only these. */
export const USER_BASIC_COLUMNS = ['users.id', 'users.username', 'users.name', 'users.state', 'users.avatar'] as const;
export type UserBasicRow = Pick<UserRow, 'id' | 'username' | 'name' | 'state' | 'avatar'>;

function avatarUrl(user: UserBasicRow, externalUrl: string): string | null {
  return user.avatar ? flat(externalUrl, '/uploads/-/system/user/avatar/', user.id, '/', encodeURIComponent(user.avatar)) : null;
}

/** UserBasic in the Service's order (lib/api/entities/user_basic.rb): custom_attributes, when asked for, before web_url. */
export function presentUserBasic(user: UserBasicRow, extras: UserExtras, o: PresentOptions): UserBasic {
  const basic = {
    id: user.id, username: user.username, name: user.name, state: user.state,
    avatar_url: avatarUrl(user, o.externalUrl),
  } as UserBasic;
  if (extras.customAttributes) basic.custom_attributes = extras.customAttributes;
  basic.web_url = flat(o.externalUrl, '/', user.username);
  return basic;
}

/**
 * The UserBasic of each of a page's people, presented once for the page however many of its rows
 * name them (issue and merge request lists name the same few on most rows); null for an id not read.
 */
export function pagePeople(users: ReadonlyMap<number, UserBasicRow>, externalUrl: string): (id: number | null) => UserBasic | null {
  const presented = new Map<number, UserBasic>();
  const o = { externalUrl, canReadProfile: false };
  return (id) => {
    const u = id === null ? undefined : users.get(id);
    if (!u) return null;
    let e = presented.get(u.id);
    if (!e) {
      e = presentUserBasic(u, {}, o);
      presented.set(u.id, e);
    }
    return e;
  };
}

/**
 * The columns UserWithAdmin is made of (and so User and UserPublic): an administrator's list of
 * users reads only these, not the password digest, lock state or counters.
 */
export const USER_ENTITY_COLUMNS = [
  'id', 'username', 'name', 'state', 'avatar', 'bio', 'location', 'public_email', 'skype', 'linkedin',
  'twitter', 'discord', 'website_url', 'organization', 'job_title', 'pronouns', 'timezone', 'private_profile',
  'created_at', 'last_sign_in_at',
  'confirmed_at', 'last_activity_on', 'email', 'theme_id', 'color_scheme_id', 'projects_limit', 'current_sign_in_at',
  'can_create_group', 'otp_required_for_login', 'external',
  'commit_email', 'admin', 'note', 'user_type'
] as const satisfies readonly (keyof UserRow)[];
export type UserEntityRow = Pick<UserRow, (typeof USER_ENTITY_COLUMNS)[number]>;

/** "Engineer at Example" as the Service words it; either part alone; null when both are blank. */
function workInformation(user: UserEntityRow): string | null {
  if (user.job_title && user.organization) return flat(user.job_title, ' at ', user.organization);
  return user.job_title || user.organization || null;
}

/**
 * Clock formatters by time zone (null: a zone Intl does not know). Making one costs tens of µs,
 * a list of users with time zones would make one per row; the zones in use are few.
 */
const clocks = new Map<string, Intl.DateTimeFormat | null>();

/** The user's wall-clock time, e.g. "3:38 PM", or null without a time zone. */
function localTime(user: UserEntityRow): string | null {
  if (!user.timezone) return null;
  let clock = clocks.get(user.timezone);
  if (clock === undefined) {
    try {
      clock = new Intl.DateTimeFormat('en-US', { timeZone: user.timezone, hour: 'numeric', minute: '2-digit', hour12: true });
    } catch {
      clock = null;
    }
    // Time zones come from a validated list, but a bound costs nothing.
    if (clocks.size >= 1_000) clocks.clear();
    clocks.set(user.timezone, clock);
  }
  return clock ? clock.format(new Date()) : null;
}

/**
 * The User entity in the Service's field order (lib/api/entities/user_basic.rb, user.rb; reference
 * §1.3): `custom_attributes` before `web_url`, `created_at` after it and the follow counts before
 * `local_time`, each only when it applies. Single users and lists are written by JSON.stringify,
 * which keeps this order (exactJson).
 */
export function presentUser(user: UserEntityRow, extras: UserExtras, o: PresentOptions): User {
  // UserBasic's fields, then the rest added in order rather than spread: this runs on every read of a user.
  const entity = presentUserBasic(user, extras, o) as User;
  if (o.canReadProfile) entity.created_at = user.created_at;
  entity.bio = user.bio;
  entity.location = user.location;
  entity.public_email = user.public_email || null;
  entity.skype = user.skype;
  entity.linkedin = user.linkedin;
  entity.twitter = user.twitter;
  entity.discord = user.discord;
  entity.website_url = user.website_url;
  entity.organization = user.organization;
  entity.job_title = user.job_title;
  entity.pronouns = user.pronouns;
  entity.bot = isBot(user);
  entity.work_information = workInformation(user);
  if (o.canReadProfile) {
    entity.followers = extras.followers ?? 0;
    entity.following = extras.following ?? 0;
    if (extras.isFollowed !== undefined) entity.is_followed = extras.isFollowed;
  }
  entity.local_time = localTime(user);
  return entity;
}

export function presentUserPublic(user: UserEntityRow, extras: UserExtras, o: PresentOptions): UserPublic {
  return {
    ...presentUser(user, extras, o),
    last_sign_in_at: user.last_sign_in_at,
    confirmed_at: user.confirmed_at,
    last_activity_on: user.last_activity_on,
    email: user.email,
    theme_id: user.theme_id,
    color_scheme_id: user.color_scheme_id,
    projects_limit: user.projects_limit,
    current_sign_in_at: user.current_sign_in_at,
    identities: (extras.identities ?? []).map((i) => ({
      provider: i.provider, extern_uid: i.extern_uid,
      ...(i.provider === 'group_saml' ? { saml_provider_id: i.saml_provider_id } : {}),
    })),
    can_create_group: user.can_create_group === 1,
    can_create_project: user.projects_limit > 0,
    two_factor_enabled: user.otp_required_for_login === 1,
    external: user.external === 1,
    private_profile: user.private_profile === 1,
    commit_email: user.commit_email || user.email,
  };
}

export function presentUserWithAdmin(user: UserEntityRow, extras: UserExtras, o: PresentOptions): UserWithAdmin {
  return {
    ...presentUserPublic(user, extras, o),
    is_admin: user.admin === 1,
    note: user.note,
    namespace_id: extras.namespaceId ?? null,
  };
}

export function presentUserDetailsWithAdmin(user: UserRow, extras: UserExtras, o: PresentOptions): UserDetailsWithAdmin {
  return {
    ...presentUserWithAdmin(user, extras, o),
    highest_role: extras.highestRole ?? 0,
    current_sign_in_ip: user.current_sign_in_ip,
    last_sign_in_ip: user.last_sign_in_ip,
    sign_in_count: user.sign_in_count,
  };
}
