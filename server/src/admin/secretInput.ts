import { UsageError } from './command';

/**
 * A secret passed as an option value, or read from standard input when the value is `-`, which
 * keeps it out of the process list and the shell history. One trailing newline is dropped.
 */
export async function readSecret(value: string, stdin: NodeJS.ReadableStream = process.stdin) {
  if (value !== '-') return value;
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer | string));
  const secret = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (secret === '') throw new UsageError('expected the secret on standard input, got nothing');
  return secret;
}
