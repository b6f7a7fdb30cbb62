/**
 * Template, TemplatesList and License (the Service's API::Entities): a file template's name and
 * text, a list entry's key and name, and a licence with choosealicense's metadata
 * (LicenseBasic: key, name, nickname, html_url, source_url; License adds popular, description,
 * conditions, permissions, limitations and the text).
 */
import { Type, type Static } from 'typebox';
import type { LicenseTemplate } from '../../domain/templates/licenses.ts';

export const TemplateSchema = Type.Object({
  name: Type.String(),
  content: Type.String(),
}, { title: 'Template' });

export const TemplatesListSchema = Type.Object({
  key: Type.String(),
  name: Type.String(),
}, { title: 'TemplatesList' });

export const LicenseSchema = Type.Object({
  key: Type.String(),
  name: Type.String(),
  nickname: Type.Union([Type.String(), Type.Null()]),
  html_url: Type.String(),
  source_url: Type.Union([Type.String(), Type.Null()]),
  popular: Type.Boolean(),
  description: Type.String(),
  conditions: Type.Array(Type.String()),
  permissions: Type.Array(Type.String()),
  limitations: Type.Array(Type.String()),
  content: Type.String(),
}, { title: 'License' });

export type Template = Static<typeof TemplateSchema>;
export type TemplatesList = Static<typeof TemplatesListSchema>;
export type License = Static<typeof LicenseSchema>;

export function presentTemplate(t: { name: string; content: string }): Template {
  return { name: t.name, content: t.content };
}

export function presentTemplatesList(t: { key: string; name: string }): TemplatesList {
  return { key: t.key, name: t.name };
}

export function presentLicense(l: LicenseTemplate): License {
  return {
    key: l.key, name: l.name, nickname: l.nickname, html_url: l.html_url, source_url: l.source_url, popular: l.popular,
    description: l.description, conditions: l.conditions, permissions: l.permissions, limitations: l.limitations, content: l.content,
  };
}
