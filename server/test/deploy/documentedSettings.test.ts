import fs from 'node:fs';
import path from 'node:path';
import { errorStatuses } from '../../src/http/errorStatuses';
import { loadConfig } from '../../src/platform/config';
import { repoRoot } from '../startup/builtServer';

/**
 * The deployment guide and files name only settings the server reads: every `NAME=` assignment
 * and every `NAME` in backticks of docs/deploy.md, deploy/* and the Dockerfile is a variable of
 * the configuration (server/src/platform/config.ts), an error code, or one of the few names
 * that belong to Node, npm or the tools around it.
 */

const documents = [
  'docs/deploy.md',
  'Dockerfile',
  ...fs.readdirSync(path.join(repoRoot, 'deploy')).map((name) => `deploy/${name}`),
];

/** Names that are not settings of the server, with where they come from. */
const notSettings = new Set([
  'NODE_ENV', // Node and npm
  'NODE_EXTRA_CA_CERTS', // Node
  'ELECTRON_SKIP_BINARY_DOWNLOAD', // npm ci of the agent's package
  'HEALTHCHECK', // Dockerfile instruction
  'SIGTERM', // signal
  'NAME', // "NAME=value" in prose
  'DIR', // a placeholder of the CLI
]);

/** The variables the configuration reads: the keys of its schema, from its source. */
function configurationVariables(): Set<string> {
  const source = fs.readFileSync(path.join(repoRoot, 'server/src/platform/config.ts'), 'utf8');
  const schema = source.slice(source.indexOf('const EnvironmentSchema = z.object({'));
  const body = schema.slice(0, schema.indexOf('\n});'));
  return new Set([...body.matchAll(/^ {2}([A-Z][A-Z0-9_]+): /gm)].map((match) => match[1]!));
}

describe('docs/deploy.md, deploy/ and the Dockerfile', () => {
  it('name no setting the server does not read', () => {
    const variables = configurationVariables();
    // The extraction found the schema: names every deployment needs are among them.
    for (const name of ['DATA_DIR', 'SECRET_KEY', 'TSA_URL', 'TRUST_PROXY', 'SMS_HTTP_URL']) {
      expect(variables).toContain(name);
    }
    const unknown: string[] = [];
    for (const document of documents) {
      const text = fs.readFileSync(path.join(repoRoot, document), 'utf8');
      const named = [
        ...[...text.matchAll(/\b([A-Z][A-Z0-9_]{2,})=/g)].map((match) => match[1]!),
        ...[...text.matchAll(/`([A-Z][A-Z0-9_]{2,})`/g)].map((match) => match[1]!),
      ];
      for (const name of named) {
        if (variables.has(name) || name in errorStatuses || notSettings.has(name)) continue;
        unknown.push(`${document}: ${name}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('the production example of the guide is a configuration the server accepts', () => {
    const guide = fs.readFileSync(path.join(repoRoot, 'docs/deploy.md'), 'utf8');
    const example = /```sh\n# \/etc\/esign\/env\n([\s\S]*?)```/.exec(guide)?.[1];
    expect(example).toBeDefined();
    const env: Record<string, string> = { APP_ENV: 'production', DATA_DIR: '/var/lib/esign' };
    for (const line of example!.split('\n')) {
      const at = line.indexOf('=');
      if (at > 0) env[line.slice(0, at)] = line.slice(at + 1);
    }
    const config = loadConfig(env);
    expect(config).toMatchObject({
      environment: 'production',
      trustProxy: true,
      publicUrl: 'https://esign.example.vn',
      notify: { mail: { transport: 'smtp' }, sms: { provider: 'http' } },
    });
  });
});
