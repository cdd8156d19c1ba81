/**
 * Writes certificate objects on a SoftHSM token, in a child process (SoftHSM reads
 * SOFTHSM2_CONF from the real environment, which jest does not give a test file).
 * Usage: node --import tsx writeCertificates.ts <json {module, tokenLabel, pin, certificates}>
 * with certificates [{id: hex CKA_ID, label, der: base64}].
 */
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import * as graphene from 'graphene-pk11';

interface Args {
  module: string;
  tokenLabel: string;
  pin: string;
  certificates: { id: string; label: string; der: string }[];
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const module = graphene.Module.load(args.module, 'softhsm');
module.initialize();
try {
  const slots = module.getSlots(true);
  let written = false;
  for (let index = 0; index < slots.length; index++) {
    const slot = slots.items(index);
    if (slot.getToken().label.trim() !== args.tokenLabel) continue;
    const session = slot.open(
      graphene.SessionFlag.SERIAL_SESSION | graphene.SessionFlag.RW_SESSION,
    );
    session.login(args.pin);
    for (const certificate of args.certificates) {
      const der = Buffer.from(certificate.der, 'base64');
      const tbs = AsnConvert.parse(der, Certificate).tbsCertificate;
      session.create({
        class: graphene.ObjectClass.CERTIFICATE,
        certType: graphene.CertificateType.X_509,
        token: true,
        private: false,
        label: certificate.label,
        id: Buffer.from(certificate.id, 'hex'),
        value: der,
        subject: Buffer.from(AsnConvert.serialize(tbs.subject)),
        issuer: Buffer.from(AsnConvert.serialize(tbs.issuer)),
      });
    }
    session.logout();
    session.close();
    written = true;
  }
  if (!written) throw new Error(`no token ${args.tokenLabel}`);
} finally {
  module.finalize();
}
