import { checkWebOrigin } from '../src/webOrigin';

describe('the web origin rule', () => {
  it.each([
    ['http on a public host', 'http://esign.example.vn', 'must use https'],
    ['a path', 'https://esign.example.vn/app', 'only scheme, host and port'],
    ['a query', 'https://esign.example.vn?x=1', 'only scheme, host and port'],
    ['a fragment', 'https://esign.example.vn#x', 'only scheme, host and port'],
    ['credentials', 'https://u:p@esign.example.vn', 'only scheme, host and port'],
    ['a bare host', 'esign.example.vn', 'is not an origin'],
    ['another scheme', 'ftp://esign.example.vn', 'must use https'],
  ])('refuses an origin with %s, saying why', (_name, origin, message) => {
    expect(checkWebOrigin(origin)).toEqual({
      ok: false,
      reason: expect.stringContaining(message),
    });
  });

  it('allows http for pages on this machine', () => {
    for (const origin of ['http://127.0.0.1:3000', 'http://[::1]:3000', 'http://localhost:8080']) {
      expect(checkWebOrigin(origin)).toEqual({ ok: true, origin });
    }
  });

  it('writes the origin canonically: lower case, no default port, no trailing slash', () => {
    expect(checkWebOrigin('HTTPS://ESign.Example.VN:443/')).toEqual({
      ok: true,
      origin: 'https://esign.example.vn',
    });
    expect(checkWebOrigin('https://esign.example.vn:8443')).toEqual({
      ok: true,
      origin: 'https://esign.example.vn:8443',
    });
  });
});
