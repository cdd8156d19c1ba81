import { createHash } from 'node:crypto';
import { migrations } from '../../src/db/migrations';

/**
 * A shipped migration never changes: databases in the field applied its SQL as it was. Each
 * migration's SQL is pinned by its SHA-256 here; a new migration adds its line, an edit to an
 * old one (or to a part it shares, db/migrations/sqlParts.ts) fails.
 */
const shipped: Record<number, string> = {
  1: '1321013890a001ba30f941b3fa2d24e5d0ff20752a96bdf392dea479e5550af3',
  2: '976e34c4da3151ecd7df243030d3eaa48a70efe4b3ea43005270add5f9be976e',
  3: '31a80b0e5b42928a124455101af6dad1c39a162937b029cc8072c5f74a3e8fcd',
  4: '05b3823903d4425967d915985d6172a33a815dca05d1be340a5771e1893b2af4',
  5: '125611d623594d7f58d828c893e1b9ef9a8da3ce7858e2f82d823d611c2ee314',
  6: 'c1b4d308ef444ef639a35f19f0802f4146c4ba1f45efb144a76842353bb438be',
  7: '071bc1b6fa868bf9729a964dd6ef44516f7967a64ab91221cf4e14ad6f981565',
  8: 'fb02fbb4e556a04a6143f429639b1b24877106e95f75b5d991f3e5a8d4b86ed5',
  9: '0aea72cc2e35e679527448ca7f2a250cffd1b181e4f78f1c3a3480584a05395f',
  10: '2731acadd66f302b638423d468b4b0f65ac5423abd61e8f550477ea95dbe2367',
  11: '1bf51f8f822206adec420133262f812544ba337d085be4427dc347ce88c3186a',
  12: '6e1c76d22bccd79ed16f6254a1844bd4d7cf97948c765965d9372a36ecab51ec',
  13: 'c9f04f42814891d5d91d166f95620559202ddc5895532b554e22acfa02794278',
  14: 'a7ea430b21c2e94f8d68ad4f47cb635f0c414f898cabc17487572f12034e5d38',
  15: 'b631346f7d24a022efa48cdb9cc93744836fcdd60ab54c89d0319bbd0ed58c61',
  16: '9a54e16153c9805193d34e0fcd95a18fc98ea74c7a87ccd3cf074452cfd77733',
  17: '3b276f1c5f30d43fbda6cf24c2946e0780e919c5dd73cfcd4f44b1a034b4017f',
  18: 'ef7d62ec8138a25e2bbcf8879da3cc304509eb76f94f38c81f9ea245ba0c7fa7',
  19: '85cc864ca2b81110d981255c11799d7aa5be434c13b4820e181d929fbe6eaa61',
  20: 'd03140681111a26ff34d616df9345867a22dbe43ac6da6156788f627ca91b641',
  21: 'b4a6a60c73aa1ff20671ac441eb8d72e0f29f7d9c1a908888bf18db2c9304fc9',
  22: '9f862e59f1c40ab3339f29cce29982aaebd24f8bb5f4af2e826e037946ca32b2',
  23: '97edca9e669a1b498eb591a043f2acd6441371ee3454d02fbecf6b1e6990eab7',
  24: '6e4f6dfaf57659f6b491ed6c13e682cf79e4e27c9b4fc90e4e349d1a0c19e166',
  25: '2a8476288a4cae0cb98ba90e1104ad5ca05cd8c5da3234da7ba19726db53fd0c',
  26: '92121f6aa2ff0054914b69b5eecd0274adaf659bcb187d3de685e4c570513ed2',
  27: '72ad4335d177d27e9ae69befd27ad5c23f92936032f617d6e7c46e26c4dcc478',
  28: '8f27fd132f8a2309410e589d3e1e8bdec69c4a7a9f20c9c19befac7a86169058',
  29: 'dadfa0fff9f22e84f46b45fa6bdceb935527d1711d4a3c409d1e6e565f73fea1',
  30: 'f72f90f24b8d751ec1ba9467252038668d09cac87c18e51dd58ce3ac2831aacd',
  31: '970831da6845cb576268efbf14d9551a75bd35962fb8389b9bfe0f20ff31b890',
};

describe('migrations', () => {
  it('run in order, each version once', () => {
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, index) => index + 1));
  });

  it.each(migrations.map((m) => [m.version, m.name, m.sql] as const))(
    'migration %i (%s) is the SQL that shipped',
    (version, _name, sql) => {
      expect(createHash('sha256').update(sql).digest('hex')).toBe(shipped[version]);
    },
  );

  it('every migration is pinned', () => {
    expect(Object.keys(shipped).map(Number)).toEqual(migrations.map((m) => m.version));
  });
});
