import { foldPlain } from '../db/migrations/025_plain_search';

/**
 * The folded form of a contract title, stored as `search_key` and applied to `search`: NFC, no
 * Vietnamese diacritics (đ → d), lower case. "hop dong", "Hợp Đồng" and "HỢP ĐỒNG" all find
 * "Hợp đồng mua bán": partners type titles without accents as often as with them. The same
 * folding as the dossier and task lists' keyword (migration 025).
 */
export function searchKeyOf(text: string): string {
  return foldPlain(text);
}
