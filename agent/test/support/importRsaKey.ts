/**
 * Imports an RSA key pair (PKCS#8 PEM) on a token under a CKA_ID, in a child process: the
 * PKCS#11 module stays out of the jest process, which then never has to finalize it.
 * Usage: node --import tsx importRsaKey.ts <json {module, tokenLabel, pin, keyFile, id}>
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
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const jwk = crypto.createPrivateKey(fs.readFileSync(args.keyFile)).export({ format: 'jwk' });
const bytes = (value: string | undefined) => Buffer.from(value ?? '', 'base64url');

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
  session.create({
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
  });
  session.logout();
  session.close();
} finally {
  module.finalize();
}
