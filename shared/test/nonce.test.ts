import { derElement, derUnsignedMagnitude, readDerElement, timestampNonce } from '../src/cms';

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
