import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * A test PKI made with the openssl CLI in a temp dir: root (RSA) → intermediate (P-256, an
 * `openssl ca` database) → leaves, plus what answers for them on 127.0.0.1 (so that a chain can
 * be complete validation data, B-LT: the intermediate names the root's CRL):
 * - the root's CRL: GET /root.crl (an `openssl ca -name root -gencrl`, revoking nothing);
 * - OCSP: every POST runs `openssl ocsp -index index.txt -CA int.pem -rsigner … -rkey …` on the
 *   request (`-reqin`/`-respout`). `openssl ocsp -port` cannot be told to listen on loopback only
 *   (it binds every interface), so the HTTP side is ours and the responder logic is openssl's.
 *   Paths choose the signer: /ocsp (a delegated RSA responder with id-kp-OCSPSigning), /ocsp-issuer
 *   (the intermediate itself, P-256), /ocsp-forged (a key the intermediate never certified),
 *   /ocsp-no-eku (issued by the intermediate, without id-kp-OCSPSigning).
 * - CRL: GET /int.crl serves the last `openssl ca -gencrl`, DER.
 */

const run = promisify(execFile);

/** `openssl ca` reads ${ENV::…} in every section when it loads the file, so both are always set. */
function caRun(args: string[], urls: { ocsp?: string; crl?: string } = {}) {
  return run('openssl', args, {
    env: {
      ...process.env,
      OCSP_URL: urls.ocsp ?? 'http://127.0.0.1:9/unused',
      CRL_URL: urls.crl ?? 'http://127.0.0.1:9/unused',
    },
  });
}

export interface Issued {
  name: string;
  pem: string;
  der: Buffer;
  keyFile: string;
  certFile: string;
}

export interface LeafOptions {
  /** Section of ca.cnf: leaf (OCSP + CRL), leaf_ocsp, leaf_crl, leaf_none, leaf_encipher. */
  profile?: 'leaf' | 'leaf_ocsp' | 'leaf_crl' | 'leaf_none' | 'leaf_encipher';
  ocspUrl?: string;
  crlUrl?: string;
  /** openssl ca -startdate/-enddate, YYYYMMDDHHMMSSZ. */
  startDate?: string;
  endDate?: string;
  /** The key: P-256 unless told. */
  kind?: 'rsa' | 'ec';
}

function derOf(pem: string): Buffer {
  return new crypto.X509Certificate(pem).raw;
}

/** YYYYMMDDHHMMSSZ for openssl ca -startdate / -enddate. */
export function opensslDate(at: Date): string {
  return `${at.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

const caConfig = (dir: string): string => `
[ ca ]
default_ca = intermediate
[ root ]
dir = ${dir}
database = $dir/root-index.txt
crlnumber = $dir/root-crlnumber
certificate = $dir/root.pem
private_key = $dir/root.key
default_md = sha256
default_crl_days = 7
[ intermediate ]
dir = ${dir}/int
database = $dir/index.txt
new_certs_dir = $dir/newcerts
serial = $dir/serial
crlnumber = $dir/crlnumber
certificate = $dir/int.pem
private_key = $dir/int.key
default_md = sha256
default_days = 30
default_crl_days = 7
policy = any_name
unique_subject = no
copy_extensions = none
crl_extensions = crl_ext
[ any_name ]
commonName = supplied
[ crl_ext ]
authorityKeyIdentifier = keyid:always
[ leaf ]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,nonRepudiation
authorityKeyIdentifier = keyid
subjectKeyIdentifier = hash
authorityInfoAccess = OCSP;URI:\${ENV::OCSP_URL}
crlDistributionPoints = URI:\${ENV::CRL_URL}
[ leaf_ocsp ]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature,nonRepudiation
authorityKeyIdentifier = keyid
authorityInfoAccess = OCSP;URI:\${ENV::OCSP_URL}
[ leaf_crl ]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature
authorityKeyIdentifier = keyid
crlDistributionPoints = URI:\${ENV::CRL_URL}
[ leaf_none ]
basicConstraints = critical,CA:false
keyUsage = critical,nonRepudiation
authorityKeyIdentifier = keyid
[ leaf_encipher ]
basicConstraints = critical,CA:false
keyUsage = critical,keyEncipherment
authorityKeyIdentifier = keyid
[ responder ]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,OCSPSigning
authorityKeyIdentifier = keyid
[ responder_no_eku ]
basicConstraints = critical,CA:false
keyUsage = critical,digitalSignature
authorityKeyIdentifier = keyid
`;

export class TestPki {
  readonly dir: string;
  readonly root: Issued;
  readonly intermediate: Issued;
  /** http://127.0.0.1:<port> of the OCSP + CRL server. */
  readonly base: string;
  /** A port nothing listens on (a responder that is down). */
  readonly deadBase: string;
  /** Requests the server answered, by path. */
  readonly hits: string[] = [];
  private readonly server: http.Server;
  private responders: Record<string, { cert: string; key: string }> = {};
  private counter = 0;

  private constructor(fields: {
    dir: string;
    root: Issued;
    intermediate: Issued;
    server: http.Server;
    base: string;
    deadBase: string;
  }) {
    this.dir = fields.dir;
    this.root = fields.root;
    this.intermediate = fields.intermediate;
    this.server = fields.server;
    this.base = fields.base;
    this.deadBase = fields.deadBase;
  }

  static async create(): Promise<TestPki> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-pki-'));
    const intDir = path.join(dir, 'int');
    fs.mkdirSync(path.join(intDir, 'newcerts'), { recursive: true });
    fs.writeFileSync(path.join(intDir, 'index.txt'), '');
    fs.writeFileSync(path.join(intDir, 'serial'), '1000\n');
    fs.writeFileSync(path.join(intDir, 'crlnumber'), '01\n');
    fs.writeFileSync(path.join(dir, 'root-index.txt'), '');
    fs.writeFileSync(path.join(dir, 'root-crlnumber'), '01\n');
    fs.writeFileSync(path.join(dir, 'ca.cnf'), caConfig(dir));

    let pki: TestPki | null = null;
    const server = http.createServer((req, res) => {
      pki?.answer(req, res).catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dead = http.createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const deadBase = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`;
    await new Promise((resolve) => dead.close(resolve));

    let root: Issued;
    let intermediate: Issued;
    try {
      root = await selfSigned(dir, 'root', 'Test Root CA', 'rsa');
      intermediate = await signedBy(dir, root, 'int/int', 'Test Intermediate CA', {
        ec: true,
        ext: `basicConstraints=critical,CA:true,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\ncrlDistributionPoints=URI:${base}/root.crl`,
      });
    } catch (error) {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
      throw error;
    }

    pki = new TestPki({ dir, root, intermediate, server, base, deadBase });
    try {
      await pki.prepare();
    } catch (error) {
      await pki.close();
      throw error;
    }
    return pki;
  }

  /** The responder certificates and the first CRL. */
  private async prepare(): Promise<void> {
    const { dir, intermediate } = this;
    // An RSA responder, so that RSA answers are checked too (the intermediate signs with P-256).
    const responder = await this.issue('OCSP Responder', { kind: 'rsa' }, 'responder');
    const noEku = await this.issue('OCSP Responder without EKU', {}, 'responder_no_eku');
    const rogue = await selfSigned(dir, 'rogue', 'Test Intermediate CA', 'ec');
    this.responders = {
      '/ocsp': { cert: responder.certFile, key: responder.keyFile },
      '/ocsp-issuer': { cert: intermediate.certFile, key: intermediate.keyFile },
      '/ocsp-forged': { cert: rogue.certFile, key: rogue.keyFile },
      '/ocsp-no-eku': { cert: noEku.certFile, key: noEku.keyFile },
    };
    await this.publishCrl();
  }

  /** A fresh number for file names. */
  private next(): number {
    this.counter += 1;
    return this.counter;
  }

  url(pathname: string): string {
    return `${this.base}${pathname}`;
  }

  private async answer(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const pathname = req.url ?? '';
    this.hits.push(pathname);
    if (req.method === 'GET' && (pathname === '/int.crl' || pathname === '/root.crl')) {
      res.writeHead(200, { 'Content-Type': 'application/pkix-crl' });
      res.end(fs.readFileSync(path.join(this.dir, `${pathname.slice(1)}.der`)));
      return;
    }
    const signer = this.responders[pathname];
    if (req.method !== 'POST' || signer === undefined) {
      res.writeHead(404).end();
      return;
    }
    const n = this.next();
    const reqFile = path.join(this.dir, `ocsp-req-${n}.der`);
    const respFile = path.join(this.dir, `ocsp-resp-${n}.der`);
    fs.writeFileSync(reqFile, Buffer.concat(chunks));
    await run('openssl', [
      'ocsp',
      '-index',
      path.join(this.dir, 'int', 'index.txt'),
      '-CA',
      this.intermediate.certFile,
      '-rsigner',
      signer.cert,
      '-rkey',
      signer.key,
      '-reqin',
      reqFile,
      '-respout',
      respFile,
      '-ndays',
      '1',
    ]);
    res.writeHead(200, { 'Content-Type': 'application/ocsp-response' });
    res.end(fs.readFileSync(respFile));
  }

  /** A certificate from the intermediate's `openssl ca` (so it is in index.txt). */
  async issue(commonName: string, options: LeafOptions = {}, section?: string): Promise<Issued> {
    const name = `leaf-${this.next()}`;
    const { keyFile, csrFile, certFile } = await keyAndRequest(
      this.dir,
      name,
      commonName,
      options.kind ?? 'ec',
    );
    const issued = await this.certifyFile(csrFile, certFile, options, section);
    return { ...issued, name, keyFile };
  }

  /**
   * The intermediate's answer to a PKCS#10 request (PEM) for a key held elsewhere (a token, a
   * key store): the CSR flow. `keyFile` is empty: the key is not ours.
   */
  async certify(csrPem: string, options: LeafOptions = {}): Promise<Issued> {
    const name = `csr-${this.next()}`;
    const csrFile = path.join(this.dir, `${name}.csr`);
    fs.writeFileSync(csrFile, csrPem);
    const issued = await this.certifyFile(csrFile, path.join(this.dir, `${name}.pem`), options);
    return { ...issued, name, keyFile: '' };
  }

  private async certifyFile(
    csrFile: string,
    certFile: string,
    options: LeafOptions,
    section?: string,
  ): Promise<Pick<Issued, 'pem' | 'der' | 'certFile'>> {
    const args = ['ca', '-batch', '-notext', '-config', path.join(this.dir, 'ca.cnf')];
    args.push(
      '-extensions',
      section ?? options.profile ?? 'leaf',
      '-in',
      csrFile,
      '-out',
      certFile,
    );
    if (options.startDate !== undefined) args.push('-startdate', options.startDate);
    if (options.endDate !== undefined) args.push('-enddate', options.endDate);
    await caRun(args, {
      ocsp: options.ocspUrl ?? this.url('/ocsp'),
      crl: options.crlUrl ?? this.url('/int.crl'),
    });
    const pem = fs.readFileSync(certFile, 'utf8');
    return { pem, der: derOf(pem), certFile };
  }

  /**
   * A certificate signed with the intermediate's key outside `openssl ca`: the CA's database
   * does not know its serial.
   */
  async issueUnrecorded(commonName: string, ocspUrl: string): Promise<Issued> {
    const ext = `basicConstraints=critical,CA:false\nkeyUsage=critical,digitalSignature\nauthorityKeyIdentifier=keyid\nauthorityInfoAccess=OCSP;URI:${ocspUrl}`;
    return signedBy(this.dir, this.intermediate, `unrecorded-${this.next()}`, commonName, {
      ec: true,
      ext,
    });
  }

  /**
   * The intermediate certified again by the root (same name, same key, so its leaves chain to
   * it), without a CRL distribution point: a CA certificate nothing can be asked about.
   */
  async intermediateWithoutCrl(): Promise<Issued> {
    const name = `int-again-${this.next()}`;
    const csrFile = path.join(this.dir, `${name}.csr`);
    const certFile = path.join(this.dir, `${name}.pem`);
    const extFile = path.join(this.dir, `${name}.ext`);
    await run('openssl', [
      'req',
      '-new',
      '-key',
      this.intermediate.keyFile,
      '-subj',
      '/CN=Test Intermediate CA',
      '-out',
      csrFile,
    ]);
    await certifyRequest(this.root, csrFile, certFile, {
      ext: 'basicConstraints=critical,CA:true,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid',
      extFile,
    });
    const pem = fs.readFileSync(certFile, 'utf8');
    return { name, pem, der: derOf(pem), keyFile: this.intermediate.keyFile, certFile };
  }

  async revoke(issued: Issued, reason = 'keyCompromise'): Promise<void> {
    await caRun([
      'ca',
      '-config',
      path.join(this.dir, 'ca.cnf'),
      '-revoke',
      issued.certFile,
      '-crl_reason',
      reason,
    ]);
  }

  /** `openssl ca -gencrl` of the intermediate and of the root, then DER for the CRL server. */
  async publishCrl(): Promise<void> {
    for (const [name, ca] of [
      ['int', 'intermediate'],
      ['root', 'root'],
    ] as const) {
      const pemFile = path.join(this.dir, `${name}.crl.pem`);
      const config = path.join(this.dir, 'ca.cnf');
      await caRun(['ca', '-config', config, '-name', ca, '-gencrl', '-out', pemFile]);
      await run('openssl', [
        'crl',
        '-in',
        pemFile,
        '-outform',
        'DER',
        '-out',
        path.join(this.dir, `${name}.crl.der`),
      ]);
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

function keyArgs(kind: 'rsa' | 'ec'): string[] {
  return kind === 'rsa'
    ? ['-newkey', 'rsa:2048']
    : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
}

/** A new key and its certificate request; names the files the certificate will sit beside. */
async function keyAndRequest(
  dir: string,
  name: string,
  commonName: string,
  kind: 'rsa' | 'ec',
): Promise<{ keyFile: string; csrFile: string; certFile: string }> {
  const keyFile = path.join(dir, `${name}.key`);
  const csrFile = path.join(dir, `${name}.csr`);
  const certFile = path.join(dir, `${name}.pem`);
  await run('openssl', [
    'req',
    '-new',
    ...keyArgs(kind),
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    csrFile,
    '-subj',
    `/CN=${commonName}`,
  ]);
  return { keyFile, csrFile, certFile };
}

/** A self-signed CA certificate (a root, or a rogue look-alike). */
export async function selfSigned(
  dir: string,
  name: string,
  commonName: string,
  kind: 'rsa' | 'ec',
  pathLength?: number,
): Promise<Issued> {
  const keyFile = path.join(dir, `${name}.key`);
  const certFile = path.join(dir, `${name}.pem`);
  await run('openssl', [
    'req',
    '-x509',
    ...keyArgs(kind),
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-subj',
    `/CN=${commonName}`,
    '-days',
    '3650',
    '-addext',
    `basicConstraints=critical,CA:true${pathLength === undefined ? '' : `,pathlen:${pathLength}`}`,
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
  ]);
  const pem = fs.readFileSync(certFile, 'utf8');
  return { name, pem, der: derOf(pem), keyFile, certFile };
}

/** A certificate signed by `issuer` with `openssl x509 -req` and the given extensions. */
export async function signedBy(
  dir: string,
  issuer: Issued,
  name: string,
  commonName: string,
  options: { ec: boolean; ext: string; days?: number },
): Promise<Issued> {
  const { keyFile, csrFile, certFile } = await keyAndRequest(
    dir,
    name,
    commonName,
    options.ec ? 'ec' : 'rsa',
  );
  await certifyRequest(issuer, csrFile, certFile, {
    ext: options.ext,
    extFile: path.join(dir, `${name}.ext`),
    ...(options.days === undefined ? {} : { days: options.days }),
  });
  const pem = fs.readFileSync(certFile, 'utf8');
  return { name, pem, der: derOf(pem), keyFile, certFile };
}

/** `openssl x509 -req`: `issuer` certifies the request in `csrFile` with extensions `ext`. */
async function certifyRequest(
  issuer: Issued,
  csrFile: string,
  certFile: string,
  options: { ext: string; extFile: string; days?: number },
): Promise<void> {
  fs.writeFileSync(options.extFile, `${options.ext}\n`);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csrFile,
    '-CA',
    issuer.certFile,
    '-CAkey',
    issuer.keyFile,
    '-CAcreateserial',
    '-out',
    certFile,
    '-days',
    String(options.days ?? 365),
    '-extfile',
    options.extFile,
  ]);
}
