import { ecdsaRawSignatureToDer } from '../src/cms';

describe('ECDSA r||s to DER ECDSA-Sig-Value', () => {
  const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

  it('writes r and s as positive minimal INTEGERs', () => {
    const r = `00${'7f'.repeat(31)}`; // leading zero dropped
    const s = `80${'01'.repeat(31)}`; // sign bit set: a zero byte added
    expect(hex(ecdsaRawSignatureToDer(Buffer.from(r + s, 'hex')))).toBe(
      `3044021f${'7f'.repeat(31)}02210080${'01'.repeat(31)}`,
    );
  });

  it('refuses an odd or empty length', () => {
    expect(() => ecdsaRawSignatureToDer(new Uint8Array(63))).toThrow(RangeError);
    expect(() => ecdsaRawSignatureToDer(new Uint8Array(0))).toThrow(RangeError);
  });
});
