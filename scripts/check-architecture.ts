/**
 * `npm run check` step: the import rules of the code base, read from the sources themselves
 * (type-only imports included, since they tie modules together just as much).
 *
 * 1. No import cycle between files, in any package.
 * 2. No import cycle between the children of any folder, at any depth: the domain folders of
 *    `server/src`, the sub-folders of a domain, ... (a file at a folder's root is its own node:
 *    `app.ts`, `context.ts`, ...).
 * 3. The HTTP layer (`server/src/http/`) is imported only by the edge, route and schema files:
 *    domains and infrastructure throw the one error type and never reach for HTTP helpers.
 * 4. SQL lives only in queries files: a Kysely builder call (`.selectFrom(`, `.insertInto(`,
 *    `.updateTable(`, `.deleteFrom(`, `.with(`, ...) or a `sql` template in `server/src` appears
 *    only in a `queries.ts`, a `queries/` folder or `server/src/db/`, so services keep the rules
 *    and name their queries.
 * 5. The engine (`server/src/signing` + `server/src/pdf`) is a library: its files import only
 *    each other, `@esign/shared`, node and npm packages, never the app around them. The files
 *    that still do are listed below with their reason; the list only shrinks (an entry whose
 *    file no longer needs it is a violation too).
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
 * around it, the web application's pages), routes, the guards their route files share, and
 * schemas.
 */
const mayImportHttp = (file: string) =>
  file === 'server/src/app.ts' ||
  file === 'server/src/serve.ts' ||
  file.startsWith('server/src/web/') ||
  /(\/routes|\/schemas|Routes|\/routeGuards)\.ts$/.test(file);

/** The engine's folders: nothing under them imports the app. */
const engineFolders = ['server/src/signing/', 'server/src/pdf/'];
/** Engine files that still import the app, each with why; the goal is an empty list. */
const engineImportsAllowed = new Map<string, string>([]);
const inEngine = (file: string) => engineFolders.some((folder) => file.startsWith(folder));

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

/** The package specifiers a file imports (`@esign/shared/cms`, `zod`, `node:fs`, ...). */
function packageImportsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map(({ fileName }) => fileName)
    .filter((fileName) => !fileName.startsWith('.'));
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

/**
 * The child of `folder` that holds `file` (a sub-folder, written with a trailing slash, or a file
 * at the folder's root), or undefined when the file lies outside the folder.
 */
function childOf(folder: string, file: string): string | undefined {
  if (!file.startsWith(`${folder}/`)) return undefined;
  const inner = file.slice(folder.length + 1);
  const slash = inner.indexOf('/');
  return slash === -1 ? inner : `${inner.slice(0, slash)}/`;
}

const problems: string[] = [];
const fileGraph = new Map<string, Set<string>>();
for (const file of packages.flatMap(sourceFiles)) fileGraph.set(file, new Set(importsOf(file)));

for (const component of cycles(fileGraph)) {
  problems.push(`file cycle: ${edgesWithin(fileGraph, component).join(', ')}`);
}

for (const [file, imports] of fileGraph) {
  if (!file.startsWith(`${serverSrc}/`) || childOf(serverSrc, file) === `${httpFolder}/`) continue;
  for (const target of imports) {
    if (childOf(serverSrc, target) === `${httpFolder}/` && !mayImportHttp(file)) {
      problems.push(`${file} imports ${target}: only app.ts, routes, route guards and schemas may`);
    }
  }
}

/** Every folder of a package, the package's root included. */
function foldersOf(files: string[]): string[] {
  const found = new Set<string>();
  for (const file of files) {
    for (let dir = path.posix.dirname(file); dir.includes('/'); dir = path.posix.dirname(dir)) {
      if (!packages.some((pkg) => dir === pkg || dir.startsWith(`${pkg}/`))) break;
      found.add(dir);
    }
  }
  return [...found].sort();
}

/**
 * No cycle between the children of any folder, at any depth: inside `server/src/signing`, the
 * sub-folders `keys/`, `certificates/`, ... and its root files form a graph just as the domain
 * folders of `server/src` do, and an arrow that runs back up is a cycle there.
 */
for (const folder of foldersOf([...fileGraph.keys()])) {
  const graph = new Map<string, Set<string>>();
  const witness = new Map<string, string>();
  for (const [file, imports] of fileGraph) {
    const from = childOf(folder, file);
    if (from === undefined) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    for (const target of imports) {
      const to = childOf(folder, target);
      if (to === undefined || to === from) continue;
      graph.get(from)!.add(to);
      witness.set(`${from} -> ${to}`, `${file} -> ${target}`);
    }
  }
  for (const component of cycles(graph)) {
    const edges = edgesWithin(graph, component).map((edge) => `${edge} (${witness.get(edge)})`);
    problems.push(`folder cycle in ${folder}: ${edges.join(', ')}`);
  }
}

for (const [file, imports] of fileGraph) {
  if (!inEngine(file)) continue;
  const outside = [
    ...[...imports].filter((target) => !inEngine(target)),
    ...packageImportsOf(file).filter(
      (name) => name.startsWith('@esign/') && !/^@esign\/shared(\/|$)/.test(name),
    ),
  ];
  if (outside.length > 0 && !engineImportsAllowed.has(file)) {
    problems.push(
      `${file} imports ${outside.join(', ')}: the engine imports only itself, @esign/shared and packages`,
    );
  } else if (outside.length === 0 && engineImportsAllowed.has(file)) {
    problems.push(
      `${file} imports nothing outside the engine now: remove it from engineImportsAllowed`,
    );
  }
}
for (const file of engineImportsAllowed.keys()) {
  if (!fileGraph.has(file)) problems.push(`${file} is in engineImportsAllowed but does not exist`);
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
  `architecture: ${fileGraph.size} files, no import cycle at any folder level, HTTP layer imported only by routes, SQL only in queries files, engine imports only itself and shared (${engineImportsAllowed.size} files still allowed)\n`,
);
