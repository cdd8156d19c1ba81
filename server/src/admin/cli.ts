import { parseArgs } from 'node:util';
import { CodedError } from '@esign/shared';
import { systemClock } from '../platform/clock';
import { ConfigError, loadConfig } from '../platform/config';
import { createLogger } from '../platform/logger';
import { openRuntime } from '../runtime';
import { type Outcome, UsageError } from './command';
import { commands } from './commands';
import { synopsis } from './synopsis';

/**
 * The operator CLI: `npm run -s admin -- <group> <action> [options] [--json]`. Parses, checks the
 * arguments before touching the database, runs one command through the domain functions and
 * prints. Exit codes: 0 done, 1 refused by the service, 2 bad arguments.
 */

const commonOptions = {
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

function isParseArgsError(error: unknown): error is Error {
  return (
    error instanceof TypeError &&
    String((error as NodeJS.ErrnoException).code).startsWith('ERR_PARSE_ARGS')
  );
}

function write(stream: NodeJS.WriteStream, text: string): void {
  stream.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** `admin [--json] <group> <action> [options]`: the two words naming the command and the rest. */
function splitCommand(argv: string[]) {
  const at = argv.findIndex((token) => !token.startsWith('-'));
  if (at === -1) return { words: [], rest: argv };
  const hasAction = at + 1 < argv.length && !argv[at + 1]!.startsWith('-');
  const count = hasAction ? 2 : 1;
  return {
    words: argv.slice(at, at + count),
    rest: [...argv.slice(0, at), ...argv.slice(at + count)],
  };
}

async function run(argv: string[]): Promise<Outcome | 'help'> {
  const { words, rest } = splitCommand(argv);
  const helpAsked = argv.includes('--help') || argv.includes('-h');
  const [group] = words;
  if (group === 'help' || (helpAsked && group === undefined)) return 'help';
  if (group === undefined) throw new UsageError('no command given');
  const command = commands.get(words.join(' '));
  if (!command) {
    if (helpAsked) return 'help';
    const known = [...commands.keys()].filter((name) => name.startsWith(`${group} `));
    throw new UsageError(
      known.length > 0
        ? `unknown command "${words.join(' ')}"; ${group} has: ${known.join(', ')}`
        : `unknown command "${group}"`,
    );
  }
  const { values } = parseArgs({
    args: rest,
    options: { ...command.argumentOptions, ...commonOptions },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return 'help';
  const work = command.accept(values, systemClock.now());

  const config = loadConfig(process.env);
  if (typeof work !== 'function') return work.offline({ config });
  // Logs go to stderr so that stdout holds only the command's output; quieter than the server
  // unless LOG_LEVEL (checked by the configuration) says otherwise.
  const logger = createLogger(process.env.LOG_LEVEL ? config.logLevel : 'warn', process.stderr);
  const runtime = openRuntime(config, { logger });
  try {
    await runtime.database.ready();
    return await work(runtime.deps);
  } finally {
    await runtime.database.close();
  }
}

/** Message on stderr; with --json also the error object on stdout. */
function fail(
  json: boolean,
  exitCode: 1 | 2,
  error: { code: string; message: string },
  text: string,
) {
  write(process.stderr, `admin: ${text}`);
  if (json)
    write(process.stdout, JSON.stringify({ error: { code: error.code, message: error.message } }));
  process.exitCode = exitCode;
}

async function main(argv: string[]): Promise<void> {
  const json = argv.includes('--json');
  try {
    const outcome = await run(argv);
    if (outcome === 'help') {
      write(process.stdout, json ? JSON.stringify({ synopsis }) : synopsis);
      return;
    }
    for (const warning of outcome.warnings ?? []) write(process.stderr, warning);
    write(process.stdout, json ? JSON.stringify(outcome.json) : outcome.lines.join('\n'));
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error) || error instanceof ConfigError) {
      const failure = { code: 'BAD_ARGUMENTS', message: error.message };
      fail(json, 2, failure, `${error.message}\nRun "admin help" for the synopsis.`);
    } else if (error instanceof CodedError) {
      fail(json, 1, error, `${error.code}: ${error.message}`);
    } else {
      const message = error instanceof Error ? error.message : String(error);
      const stack = error instanceof Error && error.stack ? `\n${error.stack}` : '';
      fail(json, 1, { code: 'INTERNAL', message }, `unexpected error: ${message}${stack}`);
    }
  }
}

void main(process.argv.slice(2));
