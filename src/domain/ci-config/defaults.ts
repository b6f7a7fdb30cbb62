/**
 * `default:` (Entry::Default of 15.2) and the deprecated top-level `image`, `services`, `cache`,
 * `before_script` and `after_script` it replaces; `default:` wins where both are given. Jobs take
 * these unless they set the key themselves or `inherit:default` leaves it out.
 */
import type { ArtifactsConfig, CacheConfig, IdTokenConfig, ImageConfig, RetryConfig, ServiceConfig } from './ci-config.ts';
import { ConfigError, isHash, type Hash } from './config-error.ts';
import { cache, idTokens, image, retry, services, stringList } from './job-keywords.ts';
import { parseJobDetails } from './parse-job-details.ts';

export const DEFAULT_KEYS = new Set([
  'after_script', 'artifacts', 'before_script', 'cache', 'image', 'interruptible', 'retry', 'services',
  'tags', 'timeout', 'hooks', 'id_tokens',
]);

export interface Defaults {
  image: ImageConfig | null;
  beforeScript: string[];
  afterScript: string[];
  services: ServiceConfig[];
  cache: CacheConfig[];
  artifacts: ArtifactsConfig | null;
  retry: RetryConfig | null;
  interruptible: boolean | null;
  tags: string[];
  timeout: number | null;
  idTokens: IdTokenConfig[] | null;
}

function scriptOf(value: unknown, key: string): string[] {
  if (value === undefined || value === null) return [];
  const list = stringList(value);
  if (list === null) throw new ConfigError(`default ${key} should be a string or a nested array of strings up to 10 levels deep`);
  return list;
}

export function parseDefaults(root: Hash): Defaults {
  const def = root.default === undefined || root.default === null ? {} : root.default;
  if (!isHash(def)) throw new ConfigError('default config should be a hash');
  const unknown = Object.keys(def).filter((k) => !DEFAULT_KEYS.has(k));
  if (unknown.length > 0) throw new ConfigError(`default config contains unknown keys: ${unknown.join(', ')}`);
  const pick = (k: string) => (def[k] !== undefined ? def[k] : root[k]);
  if (def.interruptible !== undefined && typeof def.interruptible !== 'boolean') {
    throw new ConfigError('default:interruptible config should be a boolean value');
  }
  const details = parseJobDetails('default', { artifacts: def.artifacts, tags: def.tags, timeout: def.timeout }, false);
  return {
    image: image(pick('image'), 'default'),
    beforeScript: scriptOf(pick('before_script'), 'before_script'),
    afterScript: scriptOf(pick('after_script'), 'after_script'),
    services: services(pick('services'), 'default'),
    cache: cache(pick('cache'), 'default'),
    artifacts: details.artifacts,
    retry: retry(def.retry, 'default'),
    interruptible: typeof def.interruptible === 'boolean' ? def.interruptible : null,
    tags: details.tags,
    timeout: details.timeout,
    idTokens: idTokens(def.id_tokens, 'default'),
  };
}
