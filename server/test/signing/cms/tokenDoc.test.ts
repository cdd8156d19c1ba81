import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSignedAttributes } from '@esign/shared/cms';
import { assembleSignedData, verifyRawSignature } from '../../../src/signing/cms';
import { cmsVerifyVerdict } from './testPki';

/**
 * docs/signing-with-a-token.md promises a partner can build the signed attributes byte for byte
 * with openssl alone: run its ```sh blocks as written and hold the result to our builder.
 */
const docPath = path.resolve(__dirname, '../../../../docs/signing-with-a-token.md');
let dir: string;
let output: string;

const read = (name: string) => fs.readFileSync(path.join(dir, name));

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-doc-'));
  const blocks = [...fs.readFileSync(docPath, 'utf8').matchAll(/```sh\n([\s\S]*?)```/g)];
  const script = blocks.map((block) => block[1]).join('\n');
  const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir });
  output = `${run.stdout.toString()}${run.stderr.toString()}`;
  if (run.status !== 0) throw new Error(`the doc's commands failed (${run.status}):\n${output}`);
}, 60_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('docs/signing-with-a-token.md: the worked example', () => {
  it('builds with openssl the same bytes as buildSignedAttributes', () => {
    const digest = createHash('sha256').update(read('revision.bin')).digest();
    const ours = Buffer.from(buildSignedAttributes(digest, read('signer.der')));
    expect(read('attributes.der').toString('hex')).toBe(ours.toString('hex'));
  });

  it('signs with dgst and with a raw DigestInfo alike, and gets a timestamp that verifies', () => {
    expect(output).toContain('same signature');
    expect(output).toContain('Verification: OK');
  });

  it('produces a request body the service accepts: signature verifies, CMS assembles and verifies', () => {
    const body = JSON.parse(read('sign-with-token.json').toString()) as {
      signedHash: string;
      certificateChain: string[];
      timestampToken: string;
    };
    const certificates = body.certificateChain.map((der) => Buffer.from(der, 'base64'));
    const signedAttributes = read('attributes.der');
    const verified = verifyRawSignature({
      signedAttributes,
      signature: Buffer.from(body.signedHash, 'base64'),
      certificate: certificates[0] as Buffer,
    });
    expect(verified.signatureAlgorithm).toBe('rsaPkcs1Sha256');
    const cms = assembleSignedData({
      signedAttributes,
      ...verified,
      certificates,
      timestampToken: Buffer.from(body.timestampToken, 'base64'),
    });
    expect(cmsVerifyVerdict(dir, cms, 'revision.bin', 'signer.pem')).toContain(
      'Verification successful',
    );
  });
});
