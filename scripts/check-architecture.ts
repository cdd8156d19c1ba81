/**
 * `npm run check` step: the import rules of the code base, read from the sources themselves
 * (type-only imports included, since they tie modules together just as much).
 *
 * 1. No import cycle between files, in any package.
 * 2. No import cycle between the domain folders of `server/src` (a file at its root is its own
 *    node: `app.ts`, `context.ts`, ...).
 * 3. The HTTP layer (`server/src/http/`) is imported only by the edge, route and schema files:
 *    domains and infrastructure throw the one error type and never reach for HTTP helpers.
 * 4. SQL lives only in queries files: a Kysely builder call (`.selectFrom(`, `.insertInto(`,
 *    `.updateTable(`, `.deleteFrom(`, `.with(`, ...) or a `sql` template in `server/src` appears
 *    only in a `queries.ts`, a `queries/` folder or `server/src/db/`, so services keep the rules
 *    and name their queries.
 *
 * Prints every violation and exits 1 when there is one.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(__dirname, '..');
const packages = ['server/src', 'shared/src', 'agent/src'];
const serverSrc = 'server/src';
const httpFolder = 'http';
/**
 * Files outside `http/` that may import it: the edge (the app that mounts routes, the server
 * around it, the web application's pages), routes and schemas.
 */
const mayImportHttp = (file: string) =>
  file === 'server/src/app.ts' ||
  file === 'server/src/serve.ts' ||
  file.startsWith('server/src/web/') ||
  /(\/routes|\/schemas|Routes)\.ts$/.test(file);

/** Kysely methods that start a query; `with` starts a common table expression. */
const builderMethods = new Set([
  'selectFrom',
  'selectNoFrom',
  'insertInto',
  'replaceInto',
  'updateTable',
  'deleteFrom',
  'mergeInto',
  'with',
  'withRecursive',
]);
const mayHoldSql = (file: string) =>
  /\/queries\.ts$|\/queries\/[^/]+\.ts$/.test(file) || file.startsWith(`${serverSrc}/db/`);

/** Line numbers and text of the query-builder calls and `sql` templates in a file. */
function sqlOutsideQueries(file: string): string[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node, what: string) => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    found.push(`${file}:${line + 1}: ${what}`);
  };
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      builderMethods.has(node.expression.name.text)
    ) {
      report(node, `.${node.expression.name.text}(`);
    } else if (
      ts.isTaggedTemplateExpression(node) &&
      ts.isIdentifier(node.tag) &&
      node.tag.text === 'sql'
    ) {
      report(node, 'sql`...`');
    } else if (
      ts.isPropertyAccessExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'sql'
    ) {
      report(node, `sql.${node.name.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sourceFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) found.push(...sourceFiles(relative));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) found.push(relative);
  }
  return found;
}

/** The repository files a file imports through relative specifiers. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const info = ts.preProcessFile(text, true, true);
  const resolved: string[] = [];
  for (const { fileName } of info.importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), fileName));
    const candidate = [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`, base].find((name) =>
      fs.existsSync(path.join(root, name)),
    );
    if (candidate?.match(/\.tsx?$/)) resolved.push(candidate);
  }
  return resolved;
}

/** Strongly connected components with more than one node (or a self-loop): the cycles. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

/** The edges that keep a component together, for a message one can act on. */
function edgesWithin(graph: Map<string, Set<string>>, component: string[]): string[] {
  const members = new Set(component);
  return component.flatMap((from) =>
    [...(graph.get(from) ?? [])].filter((to) => members.has(to)).map((to) => `${from} -> ${to}`),
  );
}

function folderOf(file: string): string {
  const inner = file.slice(serverSrc.length + 1);
  const slash = inner.indexOf('/');
  return slash === -1 ? inner : `${inner.slice(0, slash)}/`;
}

const problems: string[] = [];
const fileGraph = new Map<string, Set<string>>();
for (const file of packages.flatMap(sourceFiles)) fileGraph.set(file, new Set(importsOf(file)));

for (const component of cycles(fileGraph)) {
  problems.push(`file cycle: ${edgesWithin(fileGraph, component).join(', ')}`);
}

const folderGraph = new Map<string, Set<string>>();
const folderEdgeWitness = new Map<string, string>();
for (const [file, imports] of fileGraph) {
  if (!file.startsWith(`${serverSrc}/`)) continue;
  const from = folderOf(file);
  if (!folderGraph.has(from)) folderGraph.set(from, new Set());
  for (const target of imports) {
    if (!target.startsWith(`${serverSrc}/`)) continue;
    const to = folderOf(target);
    if (to === from) continue;
    folderGraph.get(from)!.add(to);
    folderEdgeWitness.set(`${from} -> ${to}`, `${file} -> ${target}`);
    if (to === `${httpFolder}/` && !mayImportHttp(file)) {
      problems.push(`${file} imports ${target}: only app.ts, routes.ts and schemas.ts may`);
    }
  }
}
for (const component of cycles(folderGraph)) {
  const edges = edgesWithin(folderGraph, component).map(
    (edge) => `${edge} (${folderEdgeWitness.get(edge)})`,
  );
  problems.push(`folder cycle in ${serverSrc}: ${edges.join(', ')}`);
}

for (const file of fileGraph.keys()) {
  if (!file.startsWith(`${serverSrc}/`) || mayHoldSql(file)) continue;
  for (const call of sqlOutsideQueries(file)) {
    problems.push(`${call}: SQL outside a queries file (move it into queries.ts or queries/)`);
  }
}

if (problems.length > 0) {
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  process.exit(1);
}
process.stdout.write(
  `architecture: ${fileGraph.size} files, no import cycle, HTTP layer imported only by routes, SQL only in queries files\n`,
);
