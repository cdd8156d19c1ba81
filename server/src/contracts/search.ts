import { withoutDiacritics } from '../notify/messages';

/**
 * The folded form of a contract title, stored as `search_key` and applied to `search`: NFC, no
 * Vietnamese diacritics (đ → d), lower case. "hop dong", "Hợp Đồng" and "HỢP ĐỒNG" all find
 * "Hợp đồng mua bán": partners type titles without accents as often as with them.
 */
export function searchKeyOf(text: string): string {
  return withoutDiacritics(text.normalize('NFC')).normalize('NFC').toLowerCase();
}
