import type { DssMaterial } from '../../pdf/signing';
import { runPdfTask } from '../../pdf/worker/pool';
import { readSignaturesTask } from '../../pdf/worker/tasks';
import { type CertificateFacts, readCertificateIfAny } from '../certificates/certificate';
import { issuerPath } from '../certificates/chain';
import { crlConcerns } from '../certificates/crl';
import { ocspResponseConcerns } from '../certificates/ocsp';
import { checkRevocation, type RevocationDeps } from '../certificates/revocation';
import { parseSignedData } from '../cms';

/**
 * Validation material (B-LT) gathered before a revision is prepared, so that the DSS goes into
 * the revision the next signature covers and the newest signature stays "total document
 * signed": answers for the signatures already in the file that its DSS lacks, and the chain of
 * a service key that is about to sign.
 */

export const emptyMaterial = (): DssMaterial => ({ certificates: [], ocspResponses: [], crls: [] });

/** Every item of every material, once each (by bytes), in order. */
export function mergeMaterial(...materials: (DssMaterial | undefined)[]): DssMaterial {
  const merged = emptyMaterial();
  const seen = new Set<string>();
  for (const material of materials) {
    if (!material) continue;
    for (const key of ['certificates', 'ocspResponses', 'crls'] as const) {
      for (const item of material[key]) {
        const id = `${key}:${item.toString('base64')}`;
        if (seen.has(id)) continue;
        seen.add(id);
        merged[key].push(item);
      }
    }
  }
  return merged;
}

export const isEmptyMaterial = (material: DssMaterial) =>
  material.certificates.length + material.ocspResponses.length + material.crls.length === 0;

/** Whether `material` holds an OCSP answer about `certificate` or a CRL of its issuer. */
export function holdsAnswerFor(
  material: DssMaterial,
  certificate: CertificateFacts,
  issuer: CertificateFacts,
): boolean {
  return (
    material.ocspResponses.some((der) => ocspResponseConcerns(der, certificate, issuer)) ||
    material.crls.some((der) => crlConcerns(der, certificate))
  );
}

/**
 * Material for one certificate path: its certificates and, for each certificate below the top,
 * an answer from `known` when there is one, else one asked now (OCSP, else CRL; the cache
 * spares repeated questions). A source that does not answer leaves that certificate without.
 */
async function materialForPath(
  deps: RevocationDeps,
  path: CertificateFacts[],
  known: DssMaterial,
  at: Date,
): Promise<DssMaterial> {
  const material: DssMaterial = {
    certificates: path.map((certificate) => certificate.der),
    ocspResponses: [],
    crls: [],
  };
  for (let index = 0; index + 1 < path.length; index += 1) {
    const certificate = path[index]!;
    const issuer = path[index + 1]!;
    if (holdsAnswerFor(known, certificate, issuer)) {
      material.ocspResponses.push(
        ...known.ocspResponses.filter((der) => ocspResponseConcerns(der, certificate, issuer)),
      );
      material.crls.push(...known.crls.filter((der) => crlConcerns(der, certificate)));
      continue;
    }
    const answer = await checkRevocation(deps, certificate.der, issuer.der, at);
    if (answer.ocspResponse) material.ocspResponses.push(answer.ocspResponse);
    if (answer.crl) material.crls.push(answer.crl);
  }
  return material;
}

/**
 * What the DSS of the file at `sourcePath` lacks for the signatures it holds: `stored` (what
 * finalize obtained for them: chains, TSA chains, answers) and, for each signer certificate
 * answered neither there nor in the DSS, its path and answers asked again. Signatures whose CMS does not parse are skipped (their
 * verification says why). Nothing lacking: empty material.
 */
export async function materialForEarlierSignatures(
  deps: RevocationDeps,
  sourcePath: string,
  stored: DssMaterial[],
): Promise<DssMaterial> {
  const { dss: existing, signatures } = await runPdfTask(readSignaturesTask, sourcePath);
  const known = mergeMaterial(...stored, existing);
  const found: DssMaterial[] = [];
  for (const signature of signatures) {
    if (signature.type !== 'signature') continue;
    let certificates: Buffer[];
    let signerDer: Buffer | undefined;
    try {
      const parsed = parseSignedData(signature.contents);
      certificates = parsed.certificates;
      signerDer = parsed.signerCertificate;
    } catch {
      continue;
    }
    const signer = signerDer && readCertificateIfAny(signerDer);
    if (!signer) continue;
    const path = issuerPath(signer, [...certificates, ...known.certificates]);
    const issuer = path[1];
    if (issuer && holdsAnswerFor(known, signer, issuer)) continue;
    found.push(await materialForPath(deps, path, known, signature.signingTime ?? deps.clock.now()));
  }
  return withoutExisting(mergeMaterial(...stored, ...found), existing);
}

/**
 * Everything the archive revision's DSS needs (PAdES B-LTA) that the file's DSS lacks: for
 * every signature and document timestamp, its signer's path and the path of its signature
 * timestamp's TSA (up to a trust anchor among `anchors` when the file's certificates stop
 * below it), each certificate below the top answered (from `stored` or the DSS when they hold
 * one, else asked now). A source that does not answer leaves that certificate without (its
 * signature then stays B-T, as verification says); a CMS that does not parse is skipped.
 */
export async function materialForArchive(
  deps: RevocationDeps,
  sourcePath: string,
  stored: DssMaterial[],
  anchors: Buffer[],
): Promise<DssMaterial> {
  const { dss: existing, signatures } = await runPdfTask(readSignaturesTask, sourcePath);
  const known = mergeMaterial(...stored, existing);
  const found: DssMaterial[] = [];
  for (const signature of signatures) {
    const at = signature.signingTime ?? deps.clock.now();
    for (const cms of signedDataChain(signature.contents)) {
      const signer = cms.signerCertificate && readCertificateIfAny(cms.signerCertificate);
      if (!signer) continue;
      const path = issuerPath(signer, [...cms.certificates, ...known.certificates, ...anchors]);
      found.push(await materialForPath(deps, path, known, at));
    }
  }
  return withoutExisting(mergeMaterial(...found), existing);
}

/** A signature's CMS and its signature timestamp token's, as far as they parse. */
function signedDataChain(contents: Buffer): ReturnType<typeof parseSignedData>[] {
  const found: ReturnType<typeof parseSignedData>[] = [];
  let next: Buffer | undefined = contents;
  while (next !== undefined && found.length < 2) {
    try {
      const parsed = parseSignedData(next);
      found.push(parsed);
      next = parsed.timestampToken;
    } catch {
      break;
    }
  }
  return found;
}

/**
 * Material for a service key about to sign: its chain (signer first, as the key store holds
 * it) and the answers for each certificate below the top, asked now.
 */
export async function materialForSignerChain(
  deps: RevocationDeps,
  chain: Buffer[],
): Promise<DssMaterial> {
  const signer = chain[0] && readCertificateIfAny(chain[0]);
  if (!signer) return emptyMaterial();
  return materialForPath(deps, issuerPath(signer, chain), emptyMaterial(), deps.clock.now());
}

/** `material` less what `existing` holds already. */
function withoutExisting(material: DssMaterial, existing: DssMaterial): DssMaterial {
  const has = (list: Buffer[], item: Buffer) => list.some((other) => other.equals(item));
  return {
    certificates: material.certificates.filter((item) => !has(existing.certificates, item)),
    ocspResponses: material.ocspResponses.filter((item) => !has(existing.ocspResponses, item)),
    crls: material.crls.filter((item) => !has(existing.crls, item)),
  };
}
