import { type Expression, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import { foldForSearch } from '../../db/migrations/002_directory_search';
import { foldPlain } from '../../db/migrations/025_plain_search';

/** Page of a directory list, already validated (page from 1, pageSize 1..200). */
export interface Paging {
  page: number;
  pageSize: number;
}

/** Bounds of `updatedFrom` / `updatedTo`, as ISO 8601 UTC strings (both inclusive). */
export interface UpdatedBetween {
  updatedFrom?: string | undefined;
  updatedTo?: string | undefined;
}

/**
 * `q`: case-insensitive substring of the row's folded `search_key` (migration 002 keeps it, with
 * Vietnamese letters folded too). LIKE wildcards typed by the caller match literally.
 */
export function searchMatches(searchKeyColumn: string, q: string): Expression<SqlBool> {
  return containsFolded(searchKeyColumn, foldForSearch(q));
}

/**
 * `keyword` of the dossier and task lists: a substring of a key folded without diacritics
 * (migration 025: dossier titles, step names), so "nguyen van anh" finds "Nguyễn Văn Ánh".
 * Also fits a column of plain codes (documentId): LIKE ignores the case of ASCII letters.
 */
export function plainMatches(
  column: string | Expression<string>,
  keyword: string,
): Expression<SqlBool> {
  return containsFolded(column, foldPlain(keyword));
}

/** `column LIKE '%folded%'`, the caller's LIKE wildcards matching literally. */
function containsFolded(column: string | Expression<string>, folded: string): Expression<SqlBool> {
  const escaped = folded.replace(/[\\%_]/g, (letter) => `\\${letter}`);
  return sql<SqlBool>`${typeof column === 'string' ? sql.ref(column) : column} LIKE ${`%${escaped}%`} ESCAPE '\\'`;
}

/** Counts every match, then reads one page of them. */
export async function paged<DB, TB extends keyof DB, O>(
  filtered: SelectQueryBuilder<DB, TB, object>,
  select: (query: SelectQueryBuilder<DB, TB, object>) => SelectQueryBuilder<DB, TB, O>,
  paging: Paging,
): Promise<{ total: number; rows: O[] }> {
  const counted = await filtered
    .select(sql<number>`count(*)`.as('total'))
    .executeTakeFirstOrThrow();
  const rows = await select(filtered)
    .limit(paging.pageSize)
    .offset((paging.page - 1) * paging.pageSize)
    .execute();
  return { total: Number((counted as { total: number }).total), rows };
}
