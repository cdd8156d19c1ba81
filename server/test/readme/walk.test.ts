import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { recordIssuedSecret, recordSecretsOfBody } from '../../../test/support/runLog';
import { readSignatures } from '../../src/pdf/signing';
import { builtServerSuite, repoRoot } from '../startup/builtServer';

jest.setTimeout(300_000);

/**
 * The README's offline walks, run as written: every `sh` block from "Try it offline: a dossier"
 * up to "Configuration" (the dossier walk, then the contract walk), in one bash in the
 * repository folder, against the built server on a fresh DATA_DIR. The only change is the port:
 * the README's `127.0.0.1:3000` becomes the test server's.
 */
function walkScript(port: number): string {
  const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const start = readme.indexOf('## Try it offline: a dossier');
  const end = readme.indexOf('## Configuration', start);
  const blocks = [...readme.slice(start, end).matchAll(/```sh\n([\s\S]*?)```/g)].map(
    (match) => match[1]!,
  );
  expect(blocks.length).toBeGreaterThanOrEqual(12);
  return blocks.join('\n').replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`);
}

describe('README: the offline walks', () => {
  const suite = builtServerSuite();

  it('the dossier walk, then the contract walk: uploaded, sent, OTP from the outbox, confirmed, signed PDF valid for pdfsig and for verify, archived B-LTA (openssl ts verifies the document timestamp)', async () => {
    const dataDir = suite.newDataDir();
    const server = await suite.start({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    const issued = path.join(dataDir, 'walk-credentials.txt');
    // The contract walk signs with the development seal: its keys come after "listening".
    for (let waited = 0; !server.stdout().includes('signing keys ready'); waited += 200) {
      if (waited > 60_000) throw new Error(`no "signing keys ready":\n${server.stdout()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const result = spawnSync(
      'bash',
      [
        '--norc',
        '--noprofile',
        '-euo',
        'pipefail',
        '-c',
        // Then the walk's credentials, for the run's check that no log holds one.
        `${walkScript(server.port)}\nprintf '%s\\n' "\${KEY:-}" "\${TOKEN:-}" "\${GUEST:-}" "\${URL:-}" > ${issued}`,
      ],
      {
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          DATA_DIR: dataDir,
        },
        encoding: 'utf8',
        timeout: 240_000,
      },
    );
    // The walk's answers and variables hold its keys, tokens and presigned URLs: the run checks
    // its logs for them.
    recordSecretsOfBody(result.stdout, 'README walk');
    for (const line of fs.existsSync(issued) ? fs.readFileSync(issued, 'utf8').split('\n') : []) {
      if (line.includes('://')) recordSecretsOfBody(line, 'README walk URL');
      else recordIssuedSecret(line, 'README walk credential');
    }
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    const out = result.stdout;
    // The dossier walk: the PDF downloads, the presigned URL answers, the dossier is rejected.
    expect(out).toContain('%PDF-');
    expect(out).toMatch(/^200$/m);
    expect(out).toContain('"status":"REJECTED"');
    // The contract walk.
    expect(out).toContain('"status":"signing"');
    expect(out).toContain('"channel":"sms"');
    expect(out).toContain('"contractStatus":"completed"');
    expect(out).toContain('Signature Validation: Signature is Valid.');
    expect(out).toContain('"isValid":true');

    // B-LTA: the completed contract's file ends with a document timestamp that pdfsig lists and
    // openssl ts verifies over its byte range with the development TSA's CA; verify says B-LTA.
    expect(out).toMatch(/Signature #2:\n\s+- Signature Field Name: DocumentTimestamp1/);
    expect(out).toContain('"level":"B-LTA"');
    const file = '/tmp/hop-dong-02-2026.pdf';
    const stamp = readSignatures(file).signatures.find((s) => s.type === 'timestamp');
    expect(stamp).toMatchObject({
      fieldName: 'DocumentTimestamp1',
      subFilter: 'ETSI.RFC3161',
      coversWholeFile: true,
    });
    const work = fs.mkdtempSync(path.join(dataDir, 'lta-'));
    const bytes = fs.readFileSync(file);
    const [a, b, c, d] = stamp!.byteRange;
    fs.writeFileSync(
      path.join(work, 'range.bin'),
      Buffer.concat([bytes.subarray(a, a + b), bytes.subarray(c, c + d)]),
    );
    fs.writeFileSync(path.join(work, 'token.der'), stamp!.contents);
    const verified = spawnSync(
      'openssl',
      [
        'ts',
        '-verify',
        '-data',
        'range.bin',
        '-in',
        'token.der',
        '-token_in',
        '-CAfile',
        path.join(dataDir, 'dev-ca', 'ca.pem'),
      ],
      { cwd: work, encoding: 'utf8' },
    );
    expect(verified.stdout).toContain('Verification: OK');
  });
});
