import net from 'node:net';
import { pdfBytes, type Route, routes } from '../../../test/support/httpsServer';
import { fileUrlLimits } from '../../src/outbound/downloadPdf';
import { hdldBody, openWorld, reply, rowCounts, storedFiles, type World } from './fixtures';

/**
 * `fileUrl` checks through endpoint 1 (the exhaustive address refusals are unit-tested in
 * server/test/outbound). Here the operator allowlist is EMPTY, as in production, unless a test
 * says otherwise: the loopback test server is then an internal address like any other.
 */

let strict: World;
let allowing: World;
let connects: jest.SpyInstance;

beforeAll(async () => {
  strict = await openWorld({ OUTBOUND_ALLOWLIST: '' });
  allowing = await openWorld();
});
afterAll(async () => {
  await strict.close();
  await allowing.close();
});
beforeEach(() => {
  connects = jest.spyOn(net.Socket.prototype, 'connect');
});
afterEach(() => connects.mockRestore());

/** The refusal of one fileUrl, and proof that nothing was written or stored. */
async function refusal(world: World, body: unknown) {
  const before = await rowCounts(world.h);
  const stored = storedFiles(world.h);
  const [status, error] = await reply(await world.create(body));
  expect(await rowCounts(world.h)).toEqual(before);
  expect(storedFiles(world.h)).toEqual(stored);
  return { status, code: error.code, field: error.details?.field };
}

describe('fileUrl checks: refused with no connection made', () => {
  it('http:// is refused: 400 FILE_URL_INVALID', async () => {
    strict.server.connections.length = 0;
    const url = strict.server.url('/a.pdf').replace('https://', 'http://');
    const body = hdldBody(strict, { files: [{ source: 'url', fileUrl: url }] });
    expect(await refusal(strict, body)).toEqual({
      status: 400,
      code: 'FILE_URL_INVALID',
      field: 'files.0.fileUrl',
    });
    expect(connects).not.toHaveBeenCalled();
    expect(strict.server.connections).toEqual([]);
  });

  it.each([
    ['a private IPv4 literal', 'https://10.1.2.3/hop-dong.pdf'],
    ['a link-local literal (cloud metadata)', 'https://169.254.169.254/latest/meta-data'],
    ['a CGNAT literal', 'https://100.64.0.1/a.pdf'],
    ['an IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/a.pdf'],
  ])('%s is refused: 400 FILE_URL_FORBIDDEN_ADDRESS', async (_what, url) => {
    const body = hdldBody(strict, { files: [{ source: 'url', fileUrl: url }] });
    expect(await refusal(strict, body)).toEqual({
      status: 400,
      code: 'FILE_URL_FORBIDDEN_ADDRESS',
      field: 'files.0.fileUrl',
    });
    expect(connects).not.toHaveBeenCalled();
  });

  it('the loopback test server with an empty allowlist is refused and never reached', async () => {
    strict.server.connections.length = 0;
    strict.server.route('/loopback.pdf', routes.bytes(pdfBytes()));
    const body = hdldBody(strict, {
      files: [{ source: 'url', fileUrl: strict.server.url('/loopback.pdf') }],
    });
    expect(await refusal(strict, body)).toEqual({
      status: 400,
      code: 'FILE_URL_FORBIDDEN_ADDRESS',
      field: 'files.0.fileUrl',
    });
    expect(connects).not.toHaveBeenCalled();
    expect(strict.server.connections).toEqual([]);
  });

  it('a host name resolving to loopback (localhost) is refused at connect time, never reached', async () => {
    strict.server.connections.length = 0;
    const url = `https://localhost:${strict.server.port}/a.pdf`;
    const body = hdldBody(strict, { files: [{ source: 'url', fileUrl: url }] });
    expect(await refusal(strict, body)).toEqual({
      status: 400,
      code: 'FILE_URL_FORBIDDEN_ADDRESS',
      field: 'files.0.fileUrl',
    });
    expect(strict.server.connections).toEqual([]);
  });
});

describe('fileUrl checks: 413, 415 and 502 (docs/file-url-errors.md)', () => {
  const answers: [string, number, string, Route][] = [
    [
      'a file announced over 50 MiB',
      413,
      'FILE_TOO_LARGE',
      routes.stream(fileUrlLimits.maxBytes + 1, { contentLength: fileUrlLimits.maxBytes + 1 })
        .route,
    ],
    [
      'a file that is not a PDF by its leading bytes (Content-Type ignored)',
      415,
      'FILE_NOT_PDF',
      routes.bytes(Buffer.from('<html>not a pdf</html>'), 'application/pdf'),
    ],
    ['an error status (403)', 502, 'FILE_URL_HTTP_STATUS', routes.status(403)],
    ['a dropped connection', 502, 'FILE_URL_UNREACHABLE', routes.reset()],
  ];
  it.each(answers)('%s: %i %s', async (_what, status, code, route) => {
    const pathname = `/answer/${code}.pdf`;
    allowing.server.route(pathname, route);
    const body = hdldBody(allowing, {
      attachments: [{ source: 'url', fileUrl: allowing.server.url(pathname) }],
    });
    expect(await refusal(allowing, body)).toEqual({
      status,
      code,
      field: 'attachments.0.fileUrl',
    });
  });

  it('a redirect is not followed: 502 FILE_URL_REDIRECT, the target never requested', async () => {
    allowing.server.requests.length = 0;
    allowing.server.route('/moved.pdf', routes.redirect(allowing.server.url('/target.pdf')));
    allowing.server.route('/target.pdf', routes.bytes(pdfBytes()));
    const body = hdldBody(allowing, {
      files: [{ source: 'url', fileUrl: allowing.server.url('/moved.pdf') }],
    });
    expect(await refusal(allowing, body)).toEqual({
      status: 502,
      code: 'FILE_URL_REDIRECT',
      field: 'files.0.fileUrl',
    });
    expect(allowing.server.requests.map((r) => r.path)).not.toContain('/target.pdf');
  });

  it('OUTBOUND_ALLOWLIST lets the listed loopback server through', async () => {
    const body = hdldBody(allowing);
    const response = await allowing.create(body);
    expect(response.status).toBe(201);
    expect(connects).toHaveBeenCalled();
  });
});
