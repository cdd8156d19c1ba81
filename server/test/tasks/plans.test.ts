import type { Compilable } from 'kysely';
import { sqliteHandle } from '../../src/db/database';
import type { HistoryAction } from '../../src/db/schema';
import {
  countQuery,
  handledTurns,
  pageQuery,
  pendingTasks,
  type TaskRowFilter,
  type TaskScope,
  taskRowsQuery,
  waitingCountQuery,
  waitingPageQuery,
} from '../../src/tasks/queries';
import { overdueTasks } from '../../src/workflow/queries/tasks';
import { useTaskWorld } from './fixtures';

/**
 * The task list must stay fast with a million tasks: every query starts from the caller's own
 * rows through an index (turns by assignee or role, history by actor) and reaches tasks,
 * dossiers and steps by primary key. SQLite's plan of each real query is read with EXPLAIN
 * QUERY PLAN; a `SCAN` of a table (a full read) fails the test.
 */

const everyFilter: TaskRowFilter = {
  fromDate: '2026-11-01T00:00:00.000Z',
  toDate: '2026-11-30T23:59:59.999Z',
  documentId: 'HD-001',
  keyword: 'duyệt',
};
const allActions: HistoryAction[] = ['NEXT', 'REJECT', 'OVERDUE'];
const tables = [
  't',
  'd',
  's',
  'h',
  'p',
  'r',
  'fd',
  'kd',
  'ks',
  'tasks',
  'turns',
  'history',
  'dossiers',
];

describe('Task list query plans use indexes (EXPLAIN QUERY PLAN)', () => {
  const context = useTaskWorld();

  function planOf(query: Compilable<unknown>): string[] {
    const compiled = query.compile();
    return sqliteHandle(context.h.runtime.database)
      .prepare(`EXPLAIN QUERY PLAN ${compiled.sql}`)
      .all(...(compiled.parameters as unknown[]))
      .map((row) => (row as { detail: string }).detail);
  }

  function expectNoTableScan(plan: string[]): void {
    const scans = plan.filter((line) =>
      tables.some((table) => new RegExp(`^SCAN ${table}( |$)`).test(line)),
    );
    expect(scans).toEqual([]);
  }

  const byKey = (alias: string) =>
    expect.stringMatching(new RegExp(`^SEARCH ${alias} (EXISTS )?USING INTEGER PRIMARY KEY`));

  /** documentId and keyword probe the task's dossier and step by primary key. */
  function expectFiltersByKey(plan: string[], filter: TaskRowFilter): void {
    if (filter.documentId !== undefined) {
      expect(plan).toContainEqual(byKey('fd'));
    }
    if (filter.keyword !== undefined) {
      expect(plan).toContainEqual(byKey('kd'));
      expect(plan).toContainEqual(byKey('ks'));
    }
  }

  function scopeOf(options: { roles: boolean; organization: boolean }): TaskScope {
    const { world } = context;
    return {
      tenantId: world.acme.id,
      organizationId: options.organization ? world.rootId : null,
      userId: world.hung.row.id,
      roleIds: options.roles ? [world.ktRoleId] : [],
      delegatorIds: [world.lan.row.id],
    };
  }

  const variants = [
    ['no filter, token scope', {}, { roles: false, organization: false }],
    ['no filter, role holder with an organization key', {}, { roles: true, organization: true }],
    ['every filter', everyFilter, { roles: true, organization: true }],
    [
      'dates only',
      { fromDate: everyFilter.fromDate, toDate: everyFilter.toDate },
      { roles: true, organization: false },
    ],
  ] as const;

  it.each(variants)(
    'pending records (%s) start from the waiting turns only (turns_assignee_waiting / turns_role_waiting)',
    (_name, filter, options) => {
      const pending = pendingTasks(context.h.deps.db, scopeOf(options), filter);
      for (const plan of [
        planOf(countQuery(pending)),
        planOf(pageQuery(context.h.deps.db, pending, null, { page: 1, pageSize: 20 })),
      ]) {
        expectNoTableScan(plan);
        expect(plan).toContainEqual(
          expect.stringMatching(
            /^SEARCH p USING COVERING INDEX turns_assignee_waiting \(assignee_user_id=\?/,
          ),
        );
        if (options.roles) {
          expect(plan).toContainEqual(
            expect.stringMatching(
              /^SEARCH r USING (COVERING )?INDEX turns_role_waiting \(role_id=\?/,
            ),
          );
        }
        expect(plan).toContainEqual('SEARCH t USING INTEGER PRIMARY KEY (rowid=?)');
        expectFiltersByKey(plan, filter);
      }
    },
  );

  const withoutDossierFilters = variants.filter(([, filter]) => !('documentId' in filter));

  it.each(withoutDossierFilters)(
    'pending records without documentId or keyword (%s) are counted and paged from the waiting-turn indexes alone, in assignedAt order',
    (_name, filter, options) => {
      const db = context.h.deps.db;
      const scope = scopeOf(options);
      for (const plan of [
        planOf(waitingCountQuery(db, scope, filter)),
        planOf(waitingPageQuery(db, scope, filter, { page: 1, pageSize: 20 })),
      ]) {
        expectNoTableScan(plan);
        expect(plan).toContainEqual(
          expect.stringMatching(
            /^SEARCH p USING COVERING INDEX turns_assignee_waiting \(assignee_user_id=\? AND task_tenant_id=\?\)/,
          ),
        );
        if (options.roles) {
          expect(plan).toContainEqual(
            expect.stringMatching(
              /^SEARCH r USING COVERING INDEX turns_role_waiting \(role_id=\? AND task_tenant_id=\?\)/,
            ),
          );
        }
        // No task is probed: tenant, organization and assignedAt come from the index.
        expect(plan.filter((line) => / t /.test(` ${line} `))).toEqual([]);
      }
    },
  );

  it.each(withoutDossierFilters)(
    'pending records from the index (%s) are exactly those of pendingTasks, in the same order',
    async (_name, filter, options) => {
      const db = context.h.deps.db;
      const scope = scopeOf(options);
      const pending = pendingTasks(db, scope, filter);
      const expected = await countQuery(pending).executeTakeFirstOrThrow();
      const counted = await waitingCountQuery(db, scope, filter).executeTakeFirstOrThrow();
      expect(counted.total).toBe(expected.total);
      for (const page of [1, 2]) {
        const paging = { page, pageSize: 2 };
        expect(await waitingPageQuery(db, scope, filter, paging).execute()).toEqual(
          await pageQuery(db, pending, null, paging).execute(),
        );
      }
    },
  );

  it.each(variants)(
    'handled records (%s) read only the index history_actor',
    (_name, filter, options) => {
      const handled = handledTurns(context.h.deps.db, scopeOf(options), filter, allActions);
      const bounded = 'fromDate' in filter ? ' AND action_at>\\? AND action_at<\\?' : '';
      for (const plan of [
        planOf(countQuery(handled)),
        planOf(pageQuery(context.h.deps.db, null, handled, { page: 50, pageSize: 20 })),
      ]) {
        expectNoTableScan(plan);
        expect(plan).toContainEqual(
          expect.stringMatching(
            new RegExp(
              `^SEARCH h USING COVERING INDEX history_actor \\(actor_user_id=\\?${bounded}\\)`,
            ),
          ),
        );
        expect(plan).toContainEqual('SEARCH t USING INTEGER PRIMARY KEY (rowid=?)');
        expectFiltersByKey(plan, filter);
      }
    },
  );

  it('a page of records is completed by primary key: tasks, dossiers, steps', () => {
    const plan = planOf(taskRowsQuery(context.h.deps.db, [1, 2, 3]));
    expectNoTableScan(plan);
    expect(plan).toEqual([
      'SEARCH t USING INTEGER PRIMARY KEY (rowid=?)',
      'SEARCH d USING INTEGER PRIMARY KEY (rowid=?)',
      'SEARCH s USING INTEGER PRIMARY KEY (rowid=?)',
    ]);
  });

  it.each(variants)(
    'status all (%s) merges both, each through its index',
    (_name, filter, options) => {
      const db = context.h.deps.db;
      const scope = scopeOf(options);
      const plan = planOf(
        pageQuery(
          db,
          pendingTasks(db, scope, filter),
          handledTurns(db, scope, filter, allActions),
          {
            page: 3,
            pageSize: 20,
          },
        ),
      );
      expectNoTableScan(plan);
      expect(plan.join('\n')).toMatch(/turns_assignee[\s\S]*history_actor/);
    },
  );

  it('the deadline scheduler reads the partial index of waiting tasks with a deadline', () => {
    const db = context.h.deps.db;
    const plan = planOf(overdueTasks(db, '2026-11-25T12:00:00.000Z', 200));
    expect(plan).toEqual([
      'SEARCH tasks USING COVERING INDEX tasks_waiting_deadline (expire_at>? AND expire_at<?)',
    ]);
  });
});
