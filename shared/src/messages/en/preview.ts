import type { preview as vi } from '../vi/preview';

export const preview: typeof vi = {
  toolbar: 'Document viewer tools',
  region: (title: string) => `Preview of the document: ${title}`,
  previous: 'Previous page',
  next: 'Next page',
  page: 'Page',
  of: (pages: number) => `of ${pages}`,
  zoomOut: 'Zoom out',
  zoomIn: 'Zoom in',
  fitWidth: 'Fit width',
  zoom: (percent: number) => `${percent}%`,
  loading: 'Loading the document…',
  failed: 'The document cannot be shown here. You can still download the file to read it.',
  pageImage: (page: number, pages: number, title: string) =>
    `Page ${page} of ${pages} of the document ${title}`,
};
