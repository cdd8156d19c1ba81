import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../../server/src/db/schema';
import { countQuery, pageQuery, pendingTasks, handledTurns } from '../../server/src/tasks/queries';
import { participantAt } from '../../server/src/workflow/taskContext';

const file = process.argv[2]!;
const sqlite = new BetterSqlite3(file, { readonly: true });
const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
async function main() {
  for (const username of ['bench.heavy', 'nv123']) {
    const user = sqlite.prepare('select id, tenant_id from users where username = ?').get(username) as { id: number; tenant_id: number };
    const org = sqlite.prepare("select organization_id from api_keys where user_id = ?").get(user.id) as { organization_id: number };
    const participant = await participantAt(db, user.id, new Date().toISOString());
    const scope = { ...participant, tenantId: user.tenant_id, organizationId: org.organization_id };
    console.log(username, JSON.stringify(scope));
    const pending = pendingTasks(db, scope, {});
    const handled = handledTurns(db, scope, {}, ['NEXT', 'REJECT', 'OVERDUE']);
    for (const [name, q] of [['count pending', countQuery(pending)], ['page pending', pageQuery(db, pending, null, { page: 1, pageSize: 20 })], ['count handled', countQuery(handled)], ['page all', pageQuery(db, pending, handled, { page: 1, pageSize: 20 })]] as const) {
      const c = q.compile();
      if (process.env.SQL) console.log(c.sql, c.parameters);
      const plan = sqlite.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).all(...(c.parameters as unknown[])) as { detail: string }[];
      const st = sqlite.prepare(c.sql);
      st.all(...(c.parameters as unknown[]));
      const t = performance.now();
      for (let i = 0; i < 20; i++) st.all(...(c.parameters as unknown[]));
      console.log(`${name}: ${((performance.now() - t) / 20).toFixed(2)} ms`, JSON.stringify(st.all(...(c.parameters as unknown[]))[0]));
      for (const p of plan) console.log('   ', p.detail);
    }
  }
}
main();
