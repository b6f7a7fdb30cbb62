/** Every Kysely call of the wikis area: wiki page metadata (WikiPage::Meta) and its slugs. */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { WikiPageMetaRow } from '../../db/tables/wiki-page-meta.ts';

type Db = Kysely<DB> | Transaction<DB>;

export async function metaBySlug(db: Db, projectId: number, slug: string): Promise<WikiPageMetaRow | undefined> {
  return db.selectFrom('wiki_page_slugs').innerJoin('wiki_page_meta', 'wiki_page_meta.id', 'wiki_page_slugs.wiki_page_meta_id')
    .selectAll('wiki_page_meta').where('wiki_page_slugs.project_id', '=', projectId).where('wiki_page_slugs.slug', '=', slug)
    .executeTakeFirst();
}

export async function insertMeta(db: Db, projectId: number, title: string, now: string): Promise<WikiPageMetaRow> {
  return db.insertInto('wiki_page_meta').values({ project_id: projectId, title, created_at: now, updated_at: now })
    .returningAll().executeTakeFirstOrThrow();
}

export async function retitleMeta(db: Db, id: number, title: string, now: string): Promise<void> {
  await db.updateTable('wiki_page_meta').set({ title, updated_at: now }).where('id', '=', id).where('title', '<>', title).execute();
}

/** Makes `slug` the page's canonical slug (kept, or added), its other slugs no longer canonical. */
export async function makeCanonicalSlug(db: Db, meta: WikiPageMetaRow, slug: string, now: string): Promise<void> {
  await db.updateTable('wiki_page_slugs').set({ canonical: 0, updated_at: now })
    .where('wiki_page_meta_id', '=', meta.id).where('slug', '<>', slug).where('canonical', '=', 1).execute();
  await db.insertInto('wiki_page_slugs')
    .values({ wiki_page_meta_id: meta.id, project_id: meta.project_id, slug, canonical: 1, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['project_id', 'slug']).doUpdateSet({ wiki_page_meta_id: meta.id, canonical: 1, updated_at: now }))
    .execute();
}
