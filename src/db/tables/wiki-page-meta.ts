/** Wiki page metadata and slugs (migration 2026-11-30T0820_wiki_page_meta). */
import type { Generated, Selectable } from 'kysely';
import type { Flag } from '../types.ts';

export interface WikiPageMetaTable {
  id: Generated<number>;
  project_id: number;
  title: string;
  created_at: string;
  updated_at: string;
}
export type WikiPageMetaRow = Selectable<WikiPageMetaTable>;

export interface WikiPageSlugsTable {
  id: Generated<number>;
  wiki_page_meta_id: number;
  project_id: number;
  slug: string;
  /** The page's current slug (1); the others are slugs it was known by. */
  canonical: Generated<Flag>;
  created_at: string;
  updated_at: string;
}

declare module '../types.ts' {
  interface DB {
    wiki_page_meta: WikiPageMetaTable;
    wiki_page_slugs: WikiPageSlugsTable;
  }
}
