import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { derOfPemFile, issueCertificate } from '../../../test/support/openssl';
import { provisionSoftHsm, run, softHsmModule } from '../../../test/support/tools';

/**
 * A test PKI made with openssl at run time: a root, an intermediate under it, and end-entity
 * certificates under the intermediate with the extensions given.
 */
export class TestPki {
  constructor(readonly dir: string) {
    issueCertificate(dir, {
      name: 'root',
      key: 'rsa',
      subject: '/C=VN/O=Test Root CA/CN=Test Root',
      extensions: ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign'],
      days: 30,
    });
    this.issue(
      'intermediate',
      'rsa',
      '/C=VN/O=Test CA/CN=Test Intermediate',
      ['basicConstraints=critical,CA:TRUE,pathlen:0', 'keyUsage=critical,keyCertSign,cRLSign'],
      'root',
    );
  }

  get rootDer(): Buffer {
    return derOfPemFile(path.join(this.dir, 'root.pem'));
  }

  get intermediateDer(): Buffer {
    return derOfPemFile(path.join(this.dir, 'intermediate.pem'));
  }

  /** A key (PKCS#8 PEM `<name>.key`) and its certificate `<name>.pem` signed by `issuer`. */
  issue(
    name: string,
    algorithm: 'rsa' | 'ec',
    subject: string,
    extensions: string[],
    issuer = 'intermediate',
  ): { keyFile: string; der: Buffer } {
    const { keyFile, der } = issueCertificate(this.dir, {
      name,
      key: algorithm,
      subject,
      issuer,
      extensions,
      days: 20,
      serialHex: Buffer.from(name).toString('hex'),
    });
    return { keyFile, der };
  }
}

export interface TestToken {
  label: string;
  pin: string;
  soPin: string;
}

/** A SoftHSM token directory and configuration of its own; tokens are added with `addToken`. */
export class SoftHsmLab {
  readonly config: string;

  constructor(readonly dir: string) {
    this.config = provisionSoftHsm(dir, []).config;
  }

  private env() {
    return { SOFTHSM2_CONF: this.config };
  }

  addToken(token: TestToken): void {
    run(
      'softhsm2-util',
      [
        '--init-token',
        '--free',
        '--label',
        token.label,
        '--so-pin',
        token.soPin,
        '--pin',
        token.pin,
      ],
      this.env(),
    );
  }

  /** Imports a key pair (PKCS#8 PEM) under CKA_ID `id`, and certificates, on the token. */
  async addKeyAndCertificates(
    token: TestToken,
    key: { file: string; id: string } | null,
    certificates: { id: string; label: string; der: Buffer }[],
  ): Promise<void> {
    if (key) {
      run(
        'softhsm2-util',
        [
          '--import',
          key.file,
          '--token',
          token.label,
          '--label',
          `key-${key.id}`,
          '--id',
          key.id,
          '--pin',
          token.pin,
        ],
        this.env(),
      );
    }
    await runTsx(
      path.join(__dirname, 'writeCertificates.ts'),
      [
        JSON.stringify({
          module: softHsmModule,
          tokenLabel: token.label,
          pin: token.pin,
          certificates: certificates.map((entry) => ({
            ...entry,
            der: entry.der.toString('base64'),
          })),
        }),
      ],
      this.env(),
    );
  }

  /**
   * An RSA key pair (PKCS#8 PEM) under CKA_ID `id` whose private key allows only the PKCS#11
   * mechanisms given: SoftHSM refuses the others at C_SignInit (CKR_MECHANISM_INVALID).
   */
  async addRestrictedKey(
    token: TestToken,
    key: { file: string; id: string },
    allowedMechanisms: number[],
    refusedMechanism: string,
  ): Promise<void> {
    await runTsx(
      path.join(__dirname, 'importRsaKey.ts'),
      [
        JSON.stringify({
          module: softHsmModule,
          tokenLabel: token.label,
          pin: token.pin,
          keyFile: key.file,
          id: key.id,
          allowedMechanisms,
          refusedMechanism,
        }),
      ],
      this.env(),
    );
  }

  /**
   * Writes objects on the token with OpenSC's pkcs11-tool, as a partner developer would (the
   * commands of docs/signing-with-a-token.md): a private key alone writes no public-key object.
   * Keys are PKCS#8 PEM files (converted to DER for the tool), certificates DER.
   */
  writeWithPkcs11Tool(
    token: TestToken,
    objects: (
      | { type: 'privkey' | 'pubkey'; keyFile: string; id: string }
      | { type: 'cert'; der: Buffer; id: string }
    )[],
  ): void {
    for (const entry of objects) {
      const file = path.join(
        this.dir,
        `${token.label.replace(/\W/g, '')}-${entry.type}-${entry.id}.der`,
      );
      if (entry.type === 'cert') fs.writeFileSync(file, entry.der);
      else {
        const key = crypto.createPrivateKey(fs.readFileSync(entry.keyFile));
        fs.writeFileSync(
          file,
          entry.type === 'privkey'
            ? key.export({ format: 'der', type: 'pkcs8' })
            : crypto.createPublicKey(key).export({ format: 'der', type: 'spki' }),
        );
      }
      run(
        'pkcs11-tool',
        [
          '--module',
          softHsmModule,
          '--token-label',
          token.label,
          '--login',
          '--pin',
          token.pin,
          '--write-object',
          file,
          '--type',
          entry.type,
          '--id',
          entry.id,
          '--label',
          `${entry.type}-${entry.id}`,
        ],
        this.env(),
      );
    }
  }

  removeToken(label: string): void {
    run('softhsm2-util', ['--delete-token', '--token', label], this.env());
  }

  /**
   * Sets CK_TOKEN_INFO flags bits in the token's stored state (SoftHSM keeps them there and
   * reports them, but never acts on them: it logs in a "locked" token with the right PIN).
   */
  setTokenFlags(label: string, bits: number): void {
    const tokens = path.join(this.dir, 'tokens');
    const padded = Buffer.from(label.padEnd(32, ' '));
    for (const entry of fs.readdirSync(tokens)) {
      const file = path.join(tokens, entry, 'token.object');
      if (!fs.existsSync(file)) continue;
      const bytes = fs.readFileSync(file);
      if (!bytes.includes(padded)) continue;
      // CKA_OS_TOKENFLAGS (vendor attribute 0x8000534b), stored as a big-endian 64-bit value.
      const marker = Buffer.from('000000008000534b0000000000000002', 'hex');
      const at = bytes.indexOf(marker) + marker.length;
      bytes.writeBigUInt64BE(bytes.readBigUInt64BE(at) | BigInt(bits), at);
      // The file starts with its generation: a new one makes SoftHSM read the file again now.
      bytes.writeBigUInt64BE(bytes.readBigUInt64BE(0) + 1n, 0);
      fs.writeFileSync(file, bytes);
      return;
    }
    throw new Error(`no token ${label}`);
  }
}

export function runTsx(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => {
      errors += chunk.toString();
    });
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${script}: ${code}\n${errors}`)),
    );
  });
}

/** The agent core in a child process; its events (JSON lines on stdout) as they come. */
export class AgentChild {
  readonly events: Record<string, unknown>[] = [];
  private readonly waiters: {
    match: (e: Record<string, unknown>) => boolean;
    resolve: (e: Record<string, unknown>) => void;
  }[] = [];
  private readonly child;
  private readonly exited: Promise<void>;

  /** `script`: agentProcess.ts (the core with a policy) or shellHarness.ts (with windows). */
  constructor(config: string, args: Record<string, unknown>, script = 'agentProcess.ts') {
    this.child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, script), JSON.stringify(args)],
      { env: { ...process.env, SOFTHSM2_CONF: config }, stdio: ['pipe', 'pipe', 'inherit'] },
    );
    readline.createInterface({ input: this.child.stdout! }).on('line', (line) => {
      const event = JSON.parse(line) as Record<string, unknown>;
      this.events.push(event);
      for (const waiter of [...this.waiters]) {
        if (waiter.match(event)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
      }
    });
    this.exited = new Promise((resolve) => this.child.on('exit', () => resolve()));
  }

  next(match: (event: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** A command line for the agent (see agentProcess.ts). */
  send(command: Record<string, unknown>): void {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) this.child.stdin!.end();
    await this.exited;
  }
}
