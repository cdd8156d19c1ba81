/**
 * The script of every page: dates in the viewer's own zone, confirmation before a form that
 * cannot be undone, and the message to an embedding parent page. Bundled by scripts/build.mjs.
 */
import { formatInstant } from '@esign/shared/displayTime';
import { postRenderedEvents } from './lib/embed';

function localizeTimes(): void {
  const locale = document.body.dataset.locale === 'en' ? 'en' : 'vi';
  for (const time of document.querySelectorAll<HTMLTimeElement>('time[data-local]')) {
    const instant = new Date(time.dateTime);
    if (Number.isNaN(instant.getTime())) continue;
    time.textContent = formatInstant(instant, {
      locale,
      dateOnly: time.dataset.local === 'date',
    });
  }
}

/** `<form data-confirm="...">`: asks before sending (cancel, reject). */
function confirmForms(): void {
  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    const question = form.dataset.confirm;
    if (question && !window.confirm(question)) event.preventDefault();
  });
}

localizeTimes();
confirmForms();
postRenderedEvents();
