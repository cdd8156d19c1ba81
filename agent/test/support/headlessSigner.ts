import fs from 'node:fs';
import path from 'node:path';
import { softHsmModule } from '../../../test/support/tools';
import { HeadlessAgent } from './headlessAgent';
import { SoftHsmLab, TestPki, type TestToken } from './testTokens';

export interface HeadlessSignerSpec {
  token: TestToken;
  /** The signer certificate's subject, as openssl takes it (`/C=VN/CN=…/emailAddress=…`). */
  subject: string;
  /** The port in the agent's settings (it falls back to the protocol's other ports). */
  port: number;
}

export interface HeadlessPolicySpec {
  /** Page origins admitted, and consented to for the token without a window. */
  origins: string[];
  /** Signing servers whose tickets are accepted. */
  ticketServers: string[];
}

/**
 * A signer's USB token for the headless agent: a SoftHSM token holding an RSA key and its
 * certificate under a fresh test CA (root → intermediate → signer; a server trusts it by adding
 * `pki.rootDer` as an anchor), the agent's settings with the intermediate in its folder, and the
 * PIN in a 0600 file. Policies and agents are made from it as a test needs them.
 */
export class HeadlessSigner {
  private constructor(
    readonly pki: TestPki,
    readonly lab: SoftHsmLab,
    private readonly spec: HeadlessSignerSpec,
    private readonly agentDir: string,
    readonly settingsFile: string,
    private readonly pinFile: string,
  ) {}

  static async create(dir: string, spec: HeadlessSignerSpec): Promise<HeadlessSigner> {
    const pki = new TestPki(dir);
    const key = pki.issue('signer', 'rsa', spec.subject, [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,nonRepudiation',
    ]);
    const lab = new SoftHsmLab(path.join(dir, 'softhsm'));
    lab.addToken(spec.token);
    await lab.addKeyAndCertificates(spec.token, { file: key.keyFile, id: '01' }, [
      { id: '01', label: 'signing', der: key.der },
    ]);
    const agentDir = path.join(dir, 'agent');
    fs.mkdirSync(path.join(agentDir, 'intermediates'), { recursive: true });
    fs.writeFileSync(path.join(agentDir, 'intermediates', 'intermediate.der'), pki.intermediateDer);
    const settingsFile = path.join(agentDir, 'settings.json');
    fs.writeFileSync(
      settingsFile,
      JSON.stringify({
        port: spec.port,
        pkcs11Modules: [{ label: 'SoftHSM2', path: softHsmModule }],
      }),
    );
    const pinFile = path.join(agentDir, 'pin');
    fs.writeFileSync(pinFile, `${spec.token.pin}\n`, { mode: 0o600 });
    return new HeadlessSigner(pki, lab, spec, agentDir, settingsFile, pinFile);
  }

  /** A policy file `name`: the origins admitted and consented to, the PIN from the file. */
  policy(name: string, policy: HeadlessPolicySpec): string {
    const file = path.join(this.agentDir, name);
    const { label } = this.spec.token;
    fs.writeFileSync(
      file,
      JSON.stringify({
        settingsFile: this.settingsFile,
        allowedOrigins: policy.origins,
        autoConsent:
          policy.origins.length > 0 ? [{ origins: policy.origins, tokenLabel: label }] : [],
        pins: [{ tokenLabel: label, pin: { file: this.pinFile } }],
        ticketServers: policy.ticketServers,
      }),
    );
    return file;
  }

  /** `--headless --policy <file>` with this token; `env` adds to SOFTHSM2_CONF. */
  start(policyFile: string, env: Record<string, string> = {}): HeadlessAgent {
    return new HeadlessAgent(policyFile, { SOFTHSM2_CONF: this.lab.config, ...env });
  }
}
