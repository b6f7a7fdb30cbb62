/**
 * How an instance setting is declared (catalogue.ts lists them): its type with the bounds the
 * Service's Grape parameter and ApplicationSetting model put on it, its default, and what kiln
 * does with it. A setting without `acts` is validated, stored and returned for the clients that
 * set it (terraform providers, python-gitlab's fixtures), and changes nothing else in kiln.
 */

export type VisibilityName = 'private' | 'internal' | 'public';

interface Common<V> {
  default: V;
  /** What kiln does with the value; absent: kept for compatibility only. */
  acts?: string;
  /** Not shown by GET (the Service's entity leaves out secret keys). */
  secret?: boolean;
  /**
   * Grape's `given <this>: ->(val) { val } do requires … end`: setting this to true needs these
   * in the same request.
   */
  requires?: readonly string[];
}

export type SettingDecl<V = unknown> = Common<V> & (
  | { type: 'boolean' }
  | { type: 'integer'; min?: number; max?: number; greaterThan?: number; values?: readonly number[]; nullable?: boolean }
  | { type: 'float'; min?: number; max?: number }
  | { type: 'string'; maxLength: number; values?: readonly string[]; check?: 'url' | 'email' | 'ref' | 'token_prefix' }
  | { type: 'datetime' }
  | { type: 'strings'; values?: readonly string[] }
  | { type: 'visibility' }
  | { type: 'visibilities' }
  | { type: 'weights' }
);

/** `varchar(255)` and most URL-less strings. */
const SHORT = 255;
/** URLs: the Service's `text` columns checked by AddressableUrlValidator; browsers stop near 2k. */
const URL = 2048;
/** Texts shown to users (sign-in text, terms, help page): the Service's `text` columns. */
const TEXT = 65_535;

type Extra = Omit<Common<never>, 'default'>;

export const bool = (d: boolean, o: Extra = {}): SettingDecl<boolean> => ({ type: 'boolean', default: d, ...o });

/** An integer, `min` 0 unless said otherwise (every count, size and period the Service keeps is). */
export const int = (d: number, o: Extra & { min?: number; max?: number; greaterThan?: number } = {}): SettingDecl<number> =>
  ({ type: 'integer', default: d, ...(o.greaterThan === undefined ? { min: 0 } : {}), ...o });

export const nullableInt = (o: Extra & { min?: number; max?: number } = {}): SettingDecl<number | null> =>
  ({ type: 'integer', default: null, nullable: true, min: 0, ...o });

export const intOneOf = (values: readonly number[], d: number, o: Extra = {}): SettingDecl<number> =>
  ({ type: 'integer', default: d, values, ...o });

export const float = (d: number, o: Extra & { min?: number; max?: number } = {}): SettingDecl<number> =>
  ({ type: 'float', default: d, ...o });

export const str = (
  d: string | null,
  o: Extra & { maxLength?: number; check?: 'url' | 'email' | 'ref' | 'token_prefix' } = {},
): SettingDecl<string | null> =>
  ({ type: 'string', maxLength: o.check === 'url' ? URL : SHORT, ...o, default: d });

export const text = (o: Extra = {}): SettingDecl<string | null> => ({ type: 'string', maxLength: TEXT, default: null, ...o });

export const url = (d: string | null = null, o: Extra = {}): SettingDecl<string | null> => str(d, { check: 'url', ...o });

export const strOneOf = <const V extends string>(values: readonly V[], d: V, o: Extra = {}): SettingDecl<V> =>
  ({ type: 'string', maxLength: SHORT, values, default: d, ...o });

export const datetime = (o: Extra = {}): SettingDecl<string | null> => ({ type: 'datetime', default: null, ...o });

export const strings = (d: readonly string[] = [], o: Extra & { values?: readonly string[] } = {}): SettingDecl<string[]> =>
  ({ type: 'strings', default: [...d], ...o });

export const visibility = (d: VisibilityName, o: Extra = {}): SettingDecl<VisibilityName> => ({ type: 'visibility', default: d, ...o });

export const visibilities = (o: Extra = {}): SettingDecl<VisibilityName[]> => ({ type: 'visibilities', default: [], ...o });

export const weights = (o: Extra = {}): SettingDecl<Record<string, number>> => ({ type: 'weights', default: { default: 100 }, ...o });

/**
 * The three settings of one of the Service's Rack::Attack throttles (`throttle_<name>_enabled`,
 * `_requests_per_period`, `_period_in_seconds`), each count and period greater than 0.
 */
export function throttle<N extends string>(name: N, requests: number, period: number, acts?: string) {
  const positive = (d: number) => int(d, { greaterThan: 0, max: 2_147_483_647, ...(acts ? { acts } : {}) });
  return {
    [`throttle_${name}_enabled`]: bool(false, acts ? { acts } : {}),
    [`throttle_${name}_requests_per_period`]: positive(requests),
    [`throttle_${name}_period_in_seconds`]: positive(period),
  } as Record<`throttle_${N}_enabled`, SettingDecl<boolean>>
    & Record<`throttle_${N}_${'requests_per_period' | 'period_in_seconds'}`, SettingDecl<number>>;
}
