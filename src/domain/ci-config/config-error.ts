/** A configuration problem, worded as the Service words it; becomes `{"message":{"base":[text]}}`. */
export class ConfigError extends Error {}

export type Hash = Record<string, unknown>;

/** `!reference [path…]`: replaced by the value at that path once every file is merged. */
export class Reference {
  readonly path: string[];
  constructor(path: string[]) {
    this.path = path;
  }
}

export function isHash(v: unknown): v is Hash {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Reference);
}
