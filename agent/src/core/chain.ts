import fs from 'node:fs/promises';
import path from 'node:path';
import { ContentInfo, SignedData } from '@peculiar/asn1-cms';
import { AsnConvert } from '@peculiar/asn1-schema';
import { type CertificateFacts, readCertificateFacts } from './certificates';
import { httpExchange } from './httpClient';

/** Longest chain built (signer + intermediates + root); deeper paths are not real PKIs. */
const MAX_CHAIN_LENGTH = 8;
const AIA_TIMEOUT_MS = 5000;
const AIA_MAX_BYTES = 128 * 1024;

/**
 * The CA certificates shipped with the agent (agent/resources/intermediates): chain-building aids,
 * never trust anchors. Sources and builds (agent/src/core, agent/dist/*) both sit two folders
 * below agent/; a packaged app finds them under `process.resourcesPath` instead.
 */
export function bundledIntermediatesDirectory(): string {
  return path.resolve(__dirname, '../../resources/intermediates');
}

export interface IssuerSources {
  /** Folders of CA certificates (DER or PEM; bundled, then the user's). */
  folders: readonly string[];
  /** Fetch a missing issuer from the certificate's AIA caIssuers URL. */
  fetchIssuers: boolean;
  log?(message: string): void;
}

/** DER or PEM (one or several certificates) or a certs-only PKCS#7 (.p7c, what AIA serves). */
export function certificatesIn(bytes: Buffer): Buffer[] {
  const text = bytes.toString('latin1');
  if (text.includes('-----BEGIN CERTIFICATE-----')) {
    return [...text.matchAll(/-----BEGIN CERTIFICATE-----([^-]+)-----END CERTIFICATE-----/g)].map(
      (match) => Buffer.from(match[1]!.replace(/\s+/g, ''), 'base64'),
    );
  }
  if (readCertificateFacts(bytes)) return [bytes];
  try {
    const signedData = AsnConvert.parse(AsnConvert.parse(bytes, ContentInfo).content, SignedData);
    return (signedData.certificates ?? []).flatMap((choice) =>
      choice.certificate ? [Buffer.from(AsnConvert.serialize(choice.certificate))] : [],
    );
  } catch {
    return [];
  }
}

/** A folder's certificates are read again when it changes, and at least this often. */
const FOLDER_RESCAN_MS = 60_000;

interface FolderRead {
  mtimeMs: number;
  readAt: number;
  certificates: Buffer[];
}

/**
 * A folder's certificates, read once and kept until the folder changes (a file added, removed
 * or renamed changes its mtime) or a minute has passed: the bundled store holds dozens of
 * certificates and every sign builds a chain.
 */
async function folderCertificatesCached(
  folder: string,
  cache: Map<string, FolderRead>,
): Promise<Buffer[]> {
  const mtimeMs = await fs.stat(folder).then(
    (stat) => stat.mtimeMs,
    () => -1,
  );
  const kept = cache.get(folder);
  const now = Date.now();
  if (kept && kept.mtimeMs === mtimeMs && now - kept.readAt < FOLDER_RESCAN_MS) {
    return kept.certificates;
  }
  const certificates = mtimeMs < 0 ? [] : await folderCertificates(folder);
  cache.set(folder, { mtimeMs, readAt: now, certificates });
  return certificates;
}

async function folderCertificates(folder: string): Promise<Buffer[]> {
  let names: string[];
  try {
    names = await fs.readdir(folder);
  } catch {
    return [];
  }
  const found: Buffer[] = [];
  for (const name of names) {
    if (!/\.(cer|crt|der|pem|p7c|p7b)$/i.test(name)) continue;
    found.push(
      ...certificatesIn(await fs.readFile(path.join(folder, name)).catch(() => Buffer.alloc(0))),
    );
  }
  return found;
}

function issues(issuer: CertificateFacts, subject: CertificateFacts): boolean {
  try {
    return subject.x509.checkIssued(issuer.x509) && subject.x509.verify(issuer.x509.publicKey);
  } catch {
    return false;
  }
}

/**
 * The signer's chain, signer first, each next certificate the issuer of the one before, as far
 * as the certificates at hand go: the token's, the folders', then AIA. Path validation and
 * trust are the server's business; the agent only collects.
 */
export class ChainBuilder {
  /** Issuers fetched by AIA in this run, by URL. */
  private readonly fetched = new Map<string, Buffer[]>();
  /** What each intermediate folder held when last read. */
  private readonly folders = new Map<string, FolderRead>();

  constructor(private readonly sources: IssuerSources) {}

  async build(signer: Buffer, tokenCertificates: readonly Buffer[]): Promise<Buffer[]> {
    const pool: CertificateFacts[] = [];
    const folders = await Promise.all(
      this.sources.folders.map((folder) => folderCertificatesCached(folder, this.folders)),
    );
    for (const der of [...tokenCertificates, ...folders.flat()]) {
      const facts = readCertificateFacts(der);
      if (facts) pool.push(facts);
    }
    const first = readCertificateFacts(signer);
    if (!first) return [signer];
    const chain: CertificateFacts[] = [first];
    while (chain.length < MAX_CHAIN_LENGTH) {
      const current = chain.at(-1)!;
      if (issues(current, current)) break;
      let issuer = pool.find((candidate) => issues(candidate, current));
      if (!issuer && this.sources.fetchIssuers) issuer = await this.fetchIssuer(current);
      if (!issuer || chain.some((link) => link.der.equals(issuer!.der))) break;
      chain.push(issuer);
    }
    return chain.map((link) => link.der);
  }

  private async fetchIssuer(subject: CertificateFacts): Promise<CertificateFacts | undefined> {
    for (const url of subject.caIssuers) {
      let certificates = this.fetched.get(url);
      if (!certificates) {
        try {
          const answer = await httpExchange(url, {
            method: 'GET',
            timeoutMs: AIA_TIMEOUT_MS,
            maxBytes: AIA_MAX_BYTES,
            maxRedirects: 2,
          });
          certificates = answer.status === 200 ? certificatesIn(answer.body) : [];
        } catch (error) {
          // Offline or blocked: the chain stays shorter; the server may still complete it.
          this.sources.log?.(
            `AIA ${url}: ${error instanceof Error ? error.message : String(error)}`,
          );
          certificates = [];
        }
        this.fetched.set(url, certificates);
      }
      for (const der of certificates) {
        const facts = readCertificateFacts(der);
        if (facts && issues(facts, subject)) return facts;
      }
    }
    return undefined;
  }
}
