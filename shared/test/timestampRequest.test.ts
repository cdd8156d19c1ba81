import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  derElement,
  derUnsignedMagnitude,
  readDerElement,
  timestampNonce,
  timestampRequest,
} from '../src/cms';

describe('timestampNonce', () => {
  it('is always a positive minimal DER INTEGER of 8 bytes, and random', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i += 1) {
      const nonce = timestampNonce();
      expect(nonce).toHaveLength(8);
      // Top bit clear (positive), next bit set: no leading zero byte is ever needed or redundant.
      expect(nonce[0]! & 0xc0).toBe(0x40);
      const encoded = derElement(0x02, nonce);
      const element = readDerElement(encoded);
      expect(Buffer.from(encoded.subarray(element.valueStart, element.end))).toEqual(nonce);
      // Its unsigned magnitude is itself: what the client compares with the token's nonce.
      expect(Buffer.from(derUnsignedMagnitude(nonce))).toEqual(nonce);
      seen.add(nonce.toString('hex'));
    }
    expect(seen.size).toBe(5000);
  });
});

describe('timestampRequest', () => {
  it('is a TimeStampReq openssl reads: SHA-256 imprint, our nonce, certReq', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsq-'));
    try {
      const imprint = crypto.createHash('sha256').update('hợp đồng').digest();
      const nonce = timestampNonce();
      const file = path.join(dir, 'request.tsq');
      fs.writeFileSync(file, timestampRequest(imprint, nonce));
      const text = execFileSync('openssl', ['ts', '-query', '-in', file, '-text'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      expect(text).toContain('Version: 1');
      expect(text).toContain('Hash Algorithm: sha256');
      expect(text.replace(/\s+/g, ' ')).toContain(
        imprint.toString('hex').match(/../g)!.slice(0, 4).join(' '),
      );
      expect(text).toContain(`Nonce: 0x${nonce.toString('hex').toUpperCase()}`);
      expect(text).toContain('Certificate required: yes');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an imprint that is not a SHA-256 digest', () => {
    expect(() => timestampRequest(Buffer.alloc(20), timestampNonce())).toThrow(TypeError);
  });
});
