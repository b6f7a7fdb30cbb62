/** A configuration problem, worded as the Service words it; becomes `{"message":{"base":[text]}}`. */
export class ConfigError extends Error {}

export type Hash = Record<string, unknown>;

export function isHash(v: unknown): v is Hash {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
