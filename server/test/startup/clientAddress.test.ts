import http from 'node:http';
import { builtServerSuite } from './builtServer';

/**
 * The built server (`node server/dist/main.js`) knows who is calling: the failed-check budget
 * and the rate limits are kept per client address, so one address that spends its budget does
 * not lock out another. Loopback takes any 127.x.y.z as a source address: two clients here.
 */
describe('client addresses at the built server', () => {
  const { newDataDir, start } = builtServerSuite();

  const wrongKey = (port: number, from: string) =>
    new Promise<number>((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          localAddress: from,
          path: '/api/integration/tasks',
          headers: { 'X-API-Key': 'esk_wrong_wrong_wrong_wrong_wrong_wrong' },
          agent: false,
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        },
      );
      request.on('error', reject);
      request.end();
    });

  it('counts failed credential checks per address', async () => {
    const server = await start({
      DATA_DIR: newDataDir(),
      APP_ENV: 'development',
      RATE_LIMIT_AUTH: '3',
    });
    const first: number[] = [];
    for (let i = 0; i < 5; i++) first.push(await wrongKey(server.port, '127.0.0.2'));
    expect(first.slice(0, 3)).toEqual([401, 401, 401]);
    expect(first.slice(3)).toEqual([429, 429]);
    // Another address still has its own budget.
    expect(await wrongKey(server.port, '127.0.0.3')).toBe(401);
    expect(await server.stop()).toBe(0);
  }, 60_000);
});
