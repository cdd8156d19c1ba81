import path from 'node:path';
import ts from 'typescript';

/**
 * The operator's command line and the web application's pages: what they call is no operation
 * of the API (a page answers its own error pages), so the walk stops there.
 */
const notOperations = [
  path.join('server', 'src', 'admin') + path.sep,
  path.join('server', 'src', 'web') + path.sep,
];

/**
 * Which operations of the API can reach a function: the call graph of `server/src`, read by the
 * TypeScript language service (the compiler's own "find all references", so imports, re-exports
 * and the handlers' lazy `await import()` are followed), walked from the given functions up to
 * the handlers registered with `router.openapi(route, handler)`. Answers each operation's
 * `operationId` with one chain of callers that leads there.
 *
 * A use of a function is followed to the named function that holds it (a declaration, a method,
 * a `const` or property holding an arrow); an anonymous callback counts as its holder's. What it
 * cannot follow, it throws on rather than missing: a use outside any function, a route that is
 * not `createRoute({ operationId: '...' })`. A call through an interface (a method of an object
 * passed in) is not seen: the PDF reads are plain function calls.
 */
export function operationsReaching(
  roots: readonly { file: string; name: string }[],
): Map<string, string> {
  const repository = path.resolve(__dirname, '../../..');
  const service = languageService(repository);
  const program = service.getProgram()!;
  const checker = program.getTypeChecker();
  const where = (node: ts.Node) => {
    const source = node.getSourceFile();
    const { line } = source.getLineAndCharacterOfPosition(node.getStart());
    return `${path.relative(repository, source.fileName)}:${line + 1}`;
  };

  const queue = roots.map(({ file, name }) => {
    const source = program.getSourceFile(path.join(repository, file));
    const declared = source && declarationNamed(source, name);
    if (!declared) throw new Error(`${name} is not declared in ${file}`);
    return { name: declared, chain: name };
  });
  const seen = new Set<ts.Node>();
  const operations = new Map<string, string>();
  while (queue.length > 0) {
    const { name, chain } = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const references = service.findReferences(name.getSourceFile().fileName, name.getStart());
    for (const reference of (references ?? []).flatMap((symbol) => symbol.references)) {
      const source = program.getSourceFile(reference.fileName);
      if (reference.isDefinition || !source) continue;
      // The operator's command line and the web app's pages answer no API operation.
      const relative = path.relative(repository, reference.fileName);
      if (notOperations.some((folder) => relative.startsWith(folder))) continue;
      const use = innermostAt(source, reference.textSpan.start);
      if (isDeclarationOnly(use)) continue;
      const holder = holderOf(use);
      if (!holder) throw new Error(`${chain} is used outside any function at ${where(use)}`);
      if ('route' in holder) {
        operations.set(operationIdOf(checker, holder.route, where), `${chain} ← ${where(use)}`);
      } else {
        queue.push({ name: holder.name, chain: `${chain} ← ${holder.name.getText()}` });
      }
    }
  }
  return operations;
}

function languageService(repository: string): ts.LanguageService {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(repository, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  )!;
  const sources = path.join(repository, 'server', 'src') + path.sep;
  const files = config.fileNames.filter((file) => path.normalize(file).startsWith(sources));
  return ts.createLanguageService({
    getScriptFileNames: () => files,
    getScriptVersion: () => '1',
    getScriptSnapshot: (file) => {
      const text = ts.sys.readFile(file);
      return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
    },
    getCurrentDirectory: () => repository,
    getCompilationSettings: () => config.options,
    getDefaultLibFileName: (options) => ts.getDefaultLibFilePath(options),
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
    readDirectory: ts.sys.readDirectory,
  });
}

/** The name node of a top-level function or `const` called `name`. */
function declarationNamed(source: ts.SourceFile, name: string): ts.Identifier | undefined {
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name?.text === name) return statement.name;
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name) && declaration.name.text === name) {
          return declaration.name;
        }
      }
    }
  }
  return undefined;
}

function innermostAt(source: ts.SourceFile, position: number): ts.Node {
  let found: ts.Node = source;
  const visit = (node: ts.Node) => {
    if (node.getStart(source) <= position && position < node.getEnd()) {
      found = node;
      ts.forEachChild(node, visit);
    }
  };
  ts.forEachChild(source, visit);
  return found;
}

/** An import, a re-export or a type: no call (the service follows aliases to their uses). */
function isDeclarationOnly(use: ts.Node): boolean {
  for (let node: ts.Node | undefined = use; node; node = node.parent) {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node) || ts.isTypeNode(node)) {
      return true;
    }
    if (ts.isFunctionLike(node) || ts.isSourceFile(node)) return false;
  }
  return false;
}

type Holder = { route: ts.Expression } | { name: ts.Identifier };

/**
 * The operation whose handler holds `use` (or is `use`, a function passed by name), or the named
 * function that holds it.
 */
function holderOf(use: ts.Node): Holder | undefined {
  for (let node: ts.Node | undefined = use; node; node = node.parent) {
    const parent: ts.Node | undefined = node.parent;
    if (
      parent &&
      ts.isCallExpression(parent) &&
      ts.isPropertyAccessExpression(parent.expression) &&
      parent.expression.name.text === 'openapi' &&
      parent.arguments[1] === node
    ) {
      return { route: parent.arguments[0]! };
    }
    if (!ts.isFunctionLike(node)) continue;
    const name =
      ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)
        ? node.name
        : parent &&
            (ts.isVariableDeclaration(parent) ||
              ts.isPropertyAssignment(parent) ||
              ts.isPropertyDeclaration(parent))
          ? parent.name
          : undefined;
    if (name && ts.isIdentifier(name)) return { name };
    // An anonymous callback: its holder is the function around it.
  }
  return undefined;
}

/** `operationId` of the `createRoute({ ... })` a route variable holds. */
function operationIdOf(
  checker: ts.TypeChecker,
  route: ts.Expression,
  where: (node: ts.Node) => string,
): string {
  const declaration = checker.getSymbolAtLocation(route)?.valueDeclaration;
  const created =
    declaration && ts.isVariableDeclaration(declaration) ? declaration.initializer : undefined;
  const options = created && ts.isCallExpression(created) ? created.arguments[0] : undefined;
  const property =
    options && ts.isObjectLiteralExpression(options)
      ? options.properties.find(
          (entry): entry is ts.PropertyAssignment =>
            ts.isPropertyAssignment(entry) && entry.name.getText() === 'operationId',
        )
      : undefined;
  if (!property || !ts.isStringLiteral(property.initializer)) {
    throw new Error(`the route at ${where(route)} is not createRoute({ operationId: '...' })`);
  }
  return property.initializer.text;
}
