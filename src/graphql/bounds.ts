/**
 * Bounds on the strings arguments carry, checked before they reach the database (PostgreSQL
 * refuses NUL in text, a lone surrogate is no UTF-8 at all, and nothing kiln stores is longer
 * than these): a clear GraphQL error instead.
 */
import { GraphQLError } from 'graphql';
import { isStorableText } from '../db/constraints.ts';

export const MAX_NAME = 255;
/** A full path: at most 20 levels (the namespace depth cap) of 255 characters. */
export const MAX_FULL_PATH = 20 * 256;

export function boundedText(value: string, name: string, max = MAX_NAME): string {
  if (value.length > max) throw new GraphQLError(`${name} is too long (maximum is ${max} characters)`);
  if (value.includes('\0')) throw new GraphQLError(`${name} must not contain NUL bytes`);
  if (!isStorableText(value)) throw new GraphQLError(`${name} must be valid UTF-8`);
  return value;
}

export function optionalText(value: string | null | undefined, name: string, max = MAX_NAME): string | undefined {
  return value === null || value === undefined ? undefined : boundedText(value, name, max);
}
