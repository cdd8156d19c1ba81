import fs from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startHttpsServer, type TestHttpsServer } from './httpsServer';
import { derOfPemFile, issueCertificate, openssl as runOpenssl } from './openssl';

/**
 * Test PKI and TSAs made with the openssl CLI at run time (nothing committed): a root CA, a TSA
 * certificate with the critical timeStamping EKU, one with the EKU not critical, and a TSA under
 * a root nobody trusts, TSAs under an intermediate that is no CA and under one whose pathlen
 * forbids the path; `openssl ts -reply` answers queries for each, and an HTTPS wrapper
 * (test/support/httpsServer, 127.0.0.1 only) serves them as TSAs.
 */

export interface TsaIdentity {
  certificate: string;
  key: string;
  /** PEM file of the issuers between it and the root, put in the token (`ts -reply -chain`). */
  chain?: string;
}

export interface OpensslPki {
  dir: string;
  rootPem: string;
  /** DER of the root CA: the trust anchor. */
  rootDer: Buffer;
  otherRootDer: Buffer;
  tsa: TsaIdentity;
  tsaNonCriticalEku: TsaIdentity;
  tsaUntrusted: TsaIdentity;
  /** A TSA under an intermediate that is not a CA (basicConstraints CA:FALSE). */
  tsaUnderNonCa: TsaIdentity;
  /** A TSA two intermediates below the root, the first allowing none below it (pathlen:0). */
  tsaPathTooLong: TsaIdentity;
  config: string;
  remove(): void;
}

const openssl = (args: string[], cwd: string) => runOpenssl(cwd, args);

export function createOpensslPki(): OpensslPki {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-tsa-'));
  const config = path.join(dir, 'tsa.cnf');
  fs.writeFileSync(path.join(dir, 'serial'), '01\n');
  fs.writeFileSync(
    config,
    `[ req ]
distinguished_name = dn
[ dn ]
[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
serial = ${path.join(dir, 'serial')}
crypto_device = builtin
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
[ ca_ext ]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[ ca_pathlen0_ext ]
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[ not_ca_ext ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyCertSign
subjectKeyIdentifier = hash
[ tsa_ext ]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
[ tsa_noncritical_ext ]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = timeStamping
`,
  );
  const root = (name: string, cn: string) =>
    issueCertificate(dir, {
      name,
      key: 'rsa',
      subject: `/CN=${cn}`,
      extensions: { config, section: 'ca_ext' },
      days: 30,
    });
  const issue = (name: string, cn: string, issuer: string, extensions: string): TsaIdentity => {
    const issued = issueCertificate(dir, {
      name,
      key: 'rsa',
      subject: `/CN=${cn}`,
      issuer,
      extensions: { config, section: extensions },
      days: 10,
    });
    return { certificate: issued.certificateFile, key: issued.keyFile };
  };
  root('root', 'Test TSA Root');
  root('other-root', 'Untrusted Root');
  const chainFile = (name: string, ...members: TsaIdentity[]) => {
    const file = path.join(dir, `${name}.pem`);
    fs.writeFileSync(file, members.map((m) => fs.readFileSync(m.certificate, 'utf8')).join(''));
    return file;
  };
  const notCa = issue('not-ca', 'Not a CA', 'root', 'not_ca_ext');
  const pathlen0 = issue('pathlen0', 'Intermediate pathlen 0', 'root', 'ca_pathlen0_ext');
  const belowPathlen0 = issue(
    'below-pathlen0',
    'Intermediate below pathlen 0',
    'pathlen0',
    'ca_ext',
  );
  return {
    dir,
    rootPem: path.join(dir, 'root.pem'),
    rootDer: derOfPemFile(path.join(dir, 'root.pem')),
    otherRootDer: derOfPemFile(path.join(dir, 'other-root.pem')),
    tsa: issue('tsa', 'Test TSA', 'root', 'tsa_ext'),
    tsaNonCriticalEku: issue(
      'tsa-noncritical',
      'Test TSA non-critical EKU',
      'root',
      'tsa_noncritical_ext',
    ),
    tsaUntrusted: issue('tsa-untrusted', 'Untrusted TSA', 'other-root', 'tsa_ext'),
    tsaUnderNonCa: {
      ...issue('tsa-under-not-ca', 'TSA under a non-CA', 'not-ca', 'tsa_ext'),
      chain: chainFile('chain-not-ca', notCa),
    },
    tsaPathTooLong: {
      ...issue('tsa-path-too-long', 'TSA path too long', 'below-pathlen0', 'tsa_ext'),
      chain: chainFile('chain-path-too-long', belowPathlen0, pathlen0),
    },
    config,
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** `openssl ts -reply` for a DER query: the DER TimeStampResp. */
export function opensslReply(
  pki: OpensslPki,
  query: Buffer,
  signer: TsaIdentity = pki.tsa,
): Buffer {
  const stamp = `${process.pid}-${Math.random().toString(36).slice(2)}`;
  const queryFile = path.join(pki.dir, `${stamp}.tsq`);
  const replyFile = path.join(pki.dir, `${stamp}.tsr`);
  fs.writeFileSync(queryFile, query);
  openssl(
    [
      'ts',
      '-reply',
      '-config',
      pki.config,
      '-queryfile',
      queryFile,
      '-signer',
      signer.certificate,
      '-inkey',
      signer.key,
      ...(signer.chain ? ['-chain', signer.chain] : []),
      '-out',
      replyFile,
    ],
    pki.dir,
  );
  return fs.readFileSync(replyFile);
}

/** An openssl query for `digest` (hex SHA-256) with its own random nonce. */
export function opensslQuery(pki: OpensslPki, digestHex: string): Buffer {
  const file = path.join(pki.dir, `q-${Math.random().toString(36).slice(2)}.tsq`);
  openssl(['ts', '-query', '-digest', digestHex, '-sha256', '-cert', '-out', file], pki.dir);
  return fs.readFileSync(file);
}

/** The token inside a reply (`openssl ts -reply -token_out`). */
export function opensslTokenOf(pki: OpensslPki, reply: Buffer): Buffer {
  const stamp = Math.random().toString(36).slice(2);
  const replyFile = path.join(pki.dir, `${stamp}.tsr`);
  const tokenFile = path.join(pki.dir, `${stamp}.tok`);
  fs.writeFileSync(replyFile, reply);
  openssl(['ts', '-reply', '-in', replyFile, '-token_out', '-out', tokenFile], pki.dir);
  return fs.readFileSync(tokenFile);
}

export async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Answers with a DER reply and the RFC 3161 media type. */
export function sendReply(response: ServerResponse, reply: Buffer): void {
  response.writeHead(200, { 'Content-Type': 'application/timestamp-reply' }).end(reply);
}

/** An HTTPS TSA wrapper: each route turns the query into a reply its own way. */
export async function startTsaServer(
  routes: Record<
    string,
    (query: Buffer, request: IncomingMessage, response: ServerResponse) => void
  >,
): Promise<TestHttpsServer> {
  const server = await startHttpsServer();
  for (const [pathname, handle] of Object.entries(routes)) {
    server.route(pathname, (request, response) => {
      readBody(request)
        .then((query) => handle(query, request, response))
        .catch(() => response.writeHead(500).end());
    });
  }
  return server;
}

/**
 * A plain-HTTP TSA on 127.0.0.1 under its own openssl PKI, as the agent may use one (it checks
 * the token it gets; trust in the TSA is the server's decision): `url` takes POSTed queries.
 */
export async function startHttpTsa(): Promise<{ url: string; close(): Promise<void> }> {
  const pki = createOpensslPki();
  const server = http.createServer((request, response) => {
    void readBody(request).then((query) => sendReply(response, opensslReply(pki, query)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      pki.remove();
    },
  };
}
