/**
 * The validations of a CI/CD variable, with the Service's texts (Ci::HasVariable, Ci::Maskable,
 * HasEnvironmentScope, Ci::InstanceVariable), gathered as `{attribute: [messages]}`.
 */
import { ValidationErrors } from '../validation-errors.ts';

export const VARIABLE_TYPES = ['env_var', 'file'] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];

/**
 * Ci::Maskable::REGEX: one line of at least 8 characters from the Base64 alphabet (RFC 4648) plus
 * `@ : . ~`, so the runner can find the value in a log and replace it.
 */
export const MASKABLE = /^[a-zA-Z0-9_+=/@:.~-]{8,}$/;
const KEY_FORMAT = /^[a-zA-Z0-9_]+$/;
/** Gitlab::Regex.environment_scope_regex. */
const SCOPE_FORMAT = /^[a-zA-Z0-9_\\/${}. *-]+$/;
export const MAX_KEY = 255;
export const MAX_SCOPE = 255;
/**
 * Ci::InstanceVariable's limit. The Service sets none on project and group variables; kiln bounds
 * every value (house rule: no string unbounded), with the same limit and text at every level.
 */
export const MAX_VALUE = 10_000;

export interface VariableAttributes {
  key: string;
  value: string;
  masked: boolean;
  environment_scope: string;
}

/** `key=` strips surrounding white space before validation (Ci::HasVariable). */
export function normaliseKey(key: string): string {
  return key.trim();
}

export function validateKey(errors: ValidationErrors, key: string): void {
  if (key === '') errors.add('key', "can't be blank");
  else if (key.length > MAX_KEY) errors.add('key', `is too long (maximum is ${MAX_KEY} characters)`);
  if (key !== '' && !KEY_FORMAT.test(key)) errors.add('key', "can contain only letters, digits and '_'.");
}

export function variableErrors(v: VariableAttributes, withScope: boolean): ValidationErrors {
  const errors = new ValidationErrors();
  validateKey(errors, v.key);
  if (v.value.length > MAX_VALUE) errors.add('value', `The value of the provided variable exceeds the ${MAX_VALUE} character limit`);
  if (v.masked && !MASKABLE.test(v.value)) errors.add('value', 'is invalid');
  if (withScope) {
    if (v.environment_scope === '') errors.add('environment_scope', "can't be blank");
    else if (v.environment_scope.length > MAX_SCOPE) errors.add('environment_scope', `is too long (maximum is ${MAX_SCOPE} characters)`);
    else if (!SCOPE_FORMAT.test(v.environment_scope)) {
      errors.add('environment_scope', "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces");
    }
  }
  return errors;
}
