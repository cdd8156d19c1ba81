import { createHash } from 'node:crypto';
import { migrations } from '../../src/db/migrations';
import { postgresOf } from '../../src/db/migrations/sqlParts';

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

/**
 * The PostgreSQL text of each migration, pinned the same way: most of it is translated from the
 * SQLite text (db/migrations/sqlParts.ts `postgresOf`), so an edit to the translator that would
 * change what a shipped migration runs on PostgreSQL fails here.
 */
const shippedPostgres: Record<number, string> = {
  1: '6a4b605ad13173bd0df73686622abb6e242304c5913eaf9a72955f1b506d9810',
  2: 'e495ac6ba6316bf8f307fa71972bdf331ccb9b316b550b7f3bc2fdad7b798cb7',
  3: 'f82955ff6e14a23d57c6143d147910fcca65cdc480df5d7ec5846db2090fd1d5',
  4: '683fb0cd59cd4788389c40c9d4d5ec4132be7c693ae14f29dfef42af321458a9',
  5: '139166a719354a7201b7efe89c68d4d0ef0b07cd94f3d67b9a2177d7588f5ff6',
  6: '5b148d2953fde6601da7d2cb14122b0ed1df84515ae7ca352e43c9812aebf466',
  7: '071bc1b6fa868bf9729a964dd6ef44516f7967a64ab91221cf4e14ad6f981565',
  8: 'fb02fbb4e556a04a6143f429639b1b24877106e95f75b5d991f3e5a8d4b86ed5',
  9: 'ea37ef3e870ba775fe2a669271868722bd2f9688e000d036453dc3ea98ae76e5',
  10: '73db45c0e49f2f39627a4a762b594beb09fd7509ee49523491aeba1685b44ab8',
  11: '84177748b971e244cdf1aba0d3888152118c32e8161685ce0f93ec83304c63b6',
  12: 'df0cb292605e3bbe96123b0280ee6a1c37d21287631fcae3d7074ea83ee81376',
  13: '02382e17ec714585e8aa9e96f4faadba41a7eaf6c82f2ed6f18c596db0750bcb',
  14: 'a7ea430b21c2e94f8d68ad4f47cb635f0c414f898cabc17487572f12034e5d38',
  15: '18ae21fc44a71df41918bc268f6ed8dd9d97271c2d073a5db8d582a8a641ea84',
  16: '837fd1e840c29e67b3aeb13c2f012a622b48b7e4ac1c405b5cf31cca25842446',
  17: '149dab0dc4eb1c73717fb4ad4a2f213bc46fea9009f6fce705cb22265603fedc',
  18: '58dd6769984cc74dc2c934343266f66890202c3c09fdbb3d317eae61bb11db3a',
  19: '3e9702d5a23cf221fccc8e515bf30ea5359ed43ec32d415b58238bff59364512',
  20: 'c691c3605a0626aff4cd661943383a395e8257361bf3242d14856aee9f9eae1d',
  21: '441638c8c05e87c6e919d7bbc9388dafd3835d45602687eb975e4d2187090851',
  22: '9f862e59f1c40ab3339f29cce29982aaebd24f8bb5f4af2e826e037946ca32b2',
  23: 'd2a94c4011871159e432652373074af396de54189dacfeebae56267170019b59',
  24: '6e4f6dfaf57659f6b491ed6c13e682cf79e4e27c9b4fc90e4e349d1a0c19e166',
  25: '464d0dc7f684ebb3e89eb870719ceebd72aaa178113d63c7fc34adb9ee730b27',
  26: 'c8614a2293bcd7f4cf0f2acbb9fe7190eb5148f2b4f4703e9ec4061f01c77018',
  27: 'ef795d3f027dd92a1c2f86ca971294ad8ab57efc2395fd3fc4c3674ef40e7bd2',
  28: '743ec91ba638295159bff2250985673d56501a0b543044950cc11df4df3edc29',
  29: '864ede545e0333c5a6e5dbfd218959ae34d53c039e8eb416a46de8248c0cd8e7',
  30: '4d76f5ed7c827b5dca58ab7143560dfa94936774c4670f15169209b736c13594',
  31: 'd512485d69cc386d0866f6c9235febe9e5903f2aec58b817d796c9b7b1027351',
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

  it.each(migrations.map((m) => [m.version, m.name, m.postgres] as const))(
    'migration %i (%s) is the PostgreSQL text that shipped',
    (version, _name, postgres) => {
      expect(createHash('sha256').update(postgres).digest('hex')).toBe(shippedPostgres[version]);
    },
  );

  it('every migration is pinned', () => {
    expect(Object.keys(shipped).map(Number)).toEqual(migrations.map((m) => m.version));
    expect(Object.keys(shippedPostgres).map(Number)).toEqual(migrations.map((m) => m.version));
  });

  it('translate SQLite DDL to PostgreSQL by the conventions, literals and comments untouched', () => {
    expect(
      postgresOf(`CREATE TABLE t (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  n INTEGER NOT NULL DEFAULT 0 CHECK (n IN (0, 1)),
  b BLOB,
  r REAL,
  kind TEXT NOT NULL DEFAULT 'INTEGER' -- BLOB's comment
) WITHOUT ROWID;
CREATE TABLE one (id INTEGER PRIMARY KEY CHECK (id = 1));
CREATE INDEX t_n ON t(n) WHERE r > 0;
INSERT OR IGNORE INTO t (kind, n) VALUES ('it''s; REAL', MAX(1, 2));
SELECT MAX(n) FROM t;`),
    ).toBe(`CREATE TABLE t (
  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  n BIGINT NOT NULL DEFAULT 0 CHECK (n IN (0, 1)),
  b BYTEA,
  r DOUBLE PRECISION,
  kind TEXT NOT NULL DEFAULT 'INTEGER' -- BLOB's comment
);
CREATE TABLE one (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY CHECK (id = 1));
CREATE INDEX t_n ON t(n) WHERE r > 0;
INSERT INTO t (kind, n) VALUES ('it''s; REAL', GREATEST(1, 2)) ON CONFLICT DO NOTHING;
SELECT MAX(n) FROM t;`);
  });

  it.each([
    'CREATE TRIGGER t_x AFTER INSERT ON t BEGIN SELECT 1; END;',
    'DROP TRIGGER t_x;',
    "SELECT RAISE(ABORT, 'no');",
    'PRAGMA foreign_keys = OFF;',
    'ALTER TABLE t ADD COLUMN j TEXT CHECK (json_valid(j));',
  ])('refuse to translate what has no PostgreSQL rule: %s', (sqlite) => {
    expect(() => postgresOf(sqlite)).toThrow(/has no translation/);
  });
});
