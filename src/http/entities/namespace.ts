/**
 * The Namespace entity of GET /namespaces (the Service's Entities::Namespace): NamespaceBasic,
 * and for groups the caller administers (Owner, or an administrator) the number of distinct
 * members of the group and its sub-groups.
 */
import { Type, type Static } from 'typebox';
import { NamespaceBasicSchema, presentNamespaceBasic, type NamespaceInfo } from './project.ts';

export const NamespaceSchema = Type.Object({
  ...NamespaceBasicSchema.properties,
  members_count_with_descendants: Type.Optional(Type.Integer()),
}, { title: 'Namespace' });

export type Namespace = Static<typeof NamespaceSchema>;

export function presentNamespace(info: NamespaceInfo, externalUrl: string, membersCount: number | null): Namespace {
  return {
    ...presentNamespaceBasic(info, externalUrl),
    ...(membersCount !== null ? { members_count_with_descendants: membersCount } : {}),
  };
}
