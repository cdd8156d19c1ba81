/**
 * How the web application writes an instant for people: `27/11/2026 14:05 GMT+7`, day first as
 * Vietnam and most of Europe write it, always with the zone it is in. The server writes it in
 * its display zone; the page's script writes it again in the viewer's zone with this same
 * function, so both read alike.
 */
export function formatInstant(
  instant: Date,
  options: { timeZone?: string; locale: 'vi' | 'en'; dateOnly?: boolean },
): string {
  const format = new Intl.DateTimeFormat(options.locale === 'vi' ? 'vi-VN' : 'en-GB', {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    ...(options.dateOnly ? {} : { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }),
    timeZoneName: 'short',
    ...(options.timeZone ? { timeZone: options.timeZone } : {}),
  });
  const part = (type: Intl.DateTimeFormatPartTypes) =>
    format.formatToParts(instant).find((candidate) => candidate.type === type)?.value ?? '';
  const date = `${part('day')}/${part('month')}/${part('year')}`;
  if (options.dateOnly) return date;
  return `${date} ${part('hour')}:${part('minute')} ${part('timeZoneName')}`;
}
