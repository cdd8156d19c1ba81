/**
 * Imports an RSA key pair (PKCS#8 PEM) on a token under a CKA_ID, in a child process: the
 * PKCS#11 module stays out of the jest process, which then never has to finalize it.
 * With `allowedMechanisms`, the private key allows only those (CKA_ALLOWED_MECHANISMS, fixed at
 * creation): SoftHSM then refuses the others at C_SignInit with CKR_MECHANISM_INVALID although
 * the token advertises them, as some token firmware does; `refusedMechanism` is checked to be.
 * Usage: node --import tsx importRsaKey.ts <json {module, tokenLabel, pin, keyFile, id,
 * allowedMechanisms?: number[], refusedMechanism?: graphene name}>
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import * as graphene from 'graphene-pk11';

interface Args {
  module: string;
  tokenLabel: string;
  pin: string;
  keyFile: string;
  id: string;
  allowedMechanisms?: number[];
  refusedMechanism?: string;
}

const CKR_MECHANISM_INVALID = 0x70;

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const jwk = crypto.createPrivateKey(fs.readFileSync(args.keyFile)).export({ format: 'jwk' });
const bytes = (value: string | undefined) => Buffer.from(value ?? '', 'base64url');

/** CKA_ALLOWED_MECHANISMS: CK_MECHANISM_TYPE values, 64-bit little-endian on this platform. */
function mechanismList(mechanisms: number[]): Buffer {
  const list = Buffer.alloc(8 * mechanisms.length);
  for (const [index, mechanism] of mechanisms.entries()) {
    list.writeBigUInt64LE(BigInt(mechanism), index * 8);
  }
  return list;
}

const module = graphene.Module.load(args.module, 'token');
module.initialize();
try {
  const slots = module.getSlots(true);
  const slot = Array.from({ length: slots.length }, (_, index) => slots.items(index)).find(
    (entry) => entry.getToken().label.trim() === args.tokenLabel,
  );
  if (!slot) throw new Error(`no token ${args.tokenLabel}`);
  const session = slot.open(graphene.SessionFlag.SERIAL_SESSION | graphene.SessionFlag.RW_SESSION);
  session.login(args.pin);
  const common = {
    keyType: graphene.KeyType.RSA,
    token: true,
    id: Buffer.from(args.id, 'hex'),
    modulus: bytes(jwk.n),
    publicExponent: bytes(jwk.e),
  };
  session.create({ ...common, class: graphene.ObjectClass.PUBLIC_KEY, private: false });
  const key = session
    .create({
      ...common,
      class: graphene.ObjectClass.PRIVATE_KEY,
      private: true,
      sign: true,
      privateExponent: bytes(jwk.d),
      prime1: bytes(jwk.p),
      prime2: bytes(jwk.q),
      exp1: bytes(jwk.dp),
      exp2: bytes(jwk.dq),
      coefficient: bytes(jwk.qi),
      ...(args.allowedMechanisms
        ? { allowedMechanisms: mechanismList(args.allowedMechanisms) }
        : {}),
    })
    .toType<graphene.PrivateKey>();
  if (args.refusedMechanism) {
    let refused = false;
    try {
      session.createSign(args.refusedMechanism, key);
    } catch (error) {
      refused = (error as { code?: number }).code === CKR_MECHANISM_INVALID;
    }
    if (!refused) throw new Error(`the token did not refuse ${args.refusedMechanism} for the key`);
  }
  session.logout();
  session.close();
} finally {
  module.finalize();
}
