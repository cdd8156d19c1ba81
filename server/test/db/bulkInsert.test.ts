import { insertRows, nextRowId } from '../../src/db/bulkInsert';
import { inTransaction } from '../../src/db/database';
import { insertUser, toUserRow } from '../../src/directory/userRecords';
import { createTenant } from '../../src/tenancy/service';
import { createHarness, type Harness } from '../support/harness';

/**
 * A seed writes rows with the ids it chose (`nextRowId`, then `insertRows`); the product's own
 * inserts, which leave the id to the database, must go on working afterwards on both dialects
 * (on PostgreSQL the identity sequence does not see explicit ids by itself).
 */
describe('bulk inserts with explicit ids', () => {
  let h: Harness;
  beforeEach(() => {
    h = createHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('leaves the next insert without an id a free id past the seeded ones', async () => {
    const { tenant } = await createTenant(h.deps.db, h.now(), { code: 'BULK', name: 'Bulk' });
    const user = (n: number) => ({
      tenantId: tenant.id,
      organizationId: null,
      code: `U${n}`,
      username: `user${n}`,
      email: `user${n}@bulk.vn`,
      status: 2,
      type: 'internal' as const,
    });
    const seeded = await inTransaction(h.deps.db, async (trx) => {
      const first = await nextRowId(trx, 'users');
      // A gap after the current rows, as a seed's batches may leave: the sequence must pass it.
      const ids = [first + 10, first + 11, first + 500];
      await insertRows(
        trx,
        'users',
        ids.map((id, n) => ({ ...toUserRow(user(n), h.now()), id })),
      );
      return ids;
    });
    const ids = (await h.deps.db.selectFrom('users').select('id').execute()).map((row) => row.id);
    expect(ids).toEqual(expect.arrayContaining(seeded));

    // Without an id: the database picks one, which must not collide with a seeded row.
    const later = await inTransaction(h.deps.db, (trx) => insertUser(trx, user(9), h.now()));
    expect(later.id).toBeGreaterThan(Math.max(...seeded));
    const again = await inTransaction(h.deps.db, (trx) => insertUser(trx, user(10), h.now()));
    expect(again.id).toBeGreaterThan(later.id);
  });

  it('accepts rows without ids and an empty batch', async () => {
    const { tenant } = await createTenant(h.deps.db, h.now(), { code: 'BULK2', name: 'Bulk 2' });
    await insertRows(h.deps.db, 'users', []);
    await insertRows(h.deps.db, 'users', [
      toUserRow(
        {
          tenantId: tenant.id,
          organizationId: null,
          code: 'N1',
          username: 'noid1',
          email: null,
          status: 2,
          type: 'internal',
        },
        h.now(),
      ),
    ]);
    const row = await h.deps.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'noid1')
      .executeTakeFirstOrThrow();
    expect(row.id).toBeGreaterThan(0);
  });
});
