import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { run } from '../../../test/support/tools';
import type { TestToken } from './testTokens';

/**
 * openCryptoki 3.8 (Debian 12) and its software token (swtok). Unlike SoftHSM it counts wrong
 * user PINs: CKF_USER_PIN_COUNT_LOW after the first, CKF_USER_PIN_FINAL_TRY after the second,
 * CKF_USER_PIN_LOCKED after the third, and C_Login of a locked PIN answers CKR_PIN_LOCKED.
 *
 * Its paths are compiled in (no configuration variable): the daemon pkcsslotd, its socket
 * /var/run/pkcsslotd.socket, /etc/opencryptoki/opencryptoki.conf and the token directory
 * /var/lib/opencryptoki/swtok, whose state is cached in /dev/shm. So the lab needs root, runs
 * only when no pkcsslotd of someone else is running, and puts a token already there back as
 * it was.
 */
export const openCryptokiModule = '/usr/lib/x86_64-linux-gnu/pkcs11/libopencryptoki.so';

const daemon = '/usr/sbin/pkcsslotd';
const pkcsconf = '/usr/sbin/pkcsconf';
const configFile = '/etc/opencryptoki/opencryptoki.conf';
const pidFile = '/var/run/pkcsslotd.pid';
const socketFile = '/var/run/pkcsslotd.socket';
const tokenDir = '/var/lib/opencryptoki/swtok';
/** Shared memory files the module creates (the TPM one comes from merely loading slot 0). */
const sharedMemory = [
  '/dev/shm/var.lib.opencryptoki.swtok',
  '/dev/shm/var.lib.opencryptoki.tpm.root',
];
/** The SO PIN of an uninitialised swtok (pkcsconf's documented default). */
const defaultSoPin = '87654321';

/**
 * CI (`CI=true`, as CI runners set it) runs .ci/run, which installs openCryptoki as root
 * (scripts/ensure-test-deps.sh): there the lab must run, and a reason it cannot is a failure.
 */
export function runningInCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env.CI ?? '').trim().toLowerCase();
  return value !== '' && value !== '0' && value !== 'false';
}

/** Why the lab cannot run here, or undefined when it can. */
export function openCryptokiUnavailable(): string | undefined {
  const installed = fs.existsSync(daemon) && fs.existsSync(openCryptokiModule);
  if (!installed) {
    return 'the opencryptoki package is not installed (scripts/ensure-test-deps.sh as root installs it)';
  }
  if (process.getuid?.() !== 0) {
    return 'needs root: starts pkcsslotd and provisions /var/lib/opencryptoki/swtok';
  }
  const running = runningDaemon();
  if (running !== undefined) {
    return `a pkcsslotd this test did not start is running (pid ${running}): its token is not ours to lock`;
  }
  return undefined;
}

/** The pid of a live pkcsslotd (a zombie left by a stopped one does not count). */
function runningDaemon(): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8'), 10);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /^\d+ \(pkcsslotd\) [^Z]/.test(stat) ? pid : undefined;
  } catch {
    // No pid file, or no such process.
    return undefined;
  }
}

/** The daemon's pid once it writes it: its first process exits before the forked one does. */
async function daemonPid(): Promise<number> {
  for (let waited = 0; waited < 10_000; waited += 50) {
    const pid = runningDaemon();
    if (pid !== undefined) return pid;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('pkcsslotd did not start');
}

/** The slot number the configuration gives the software token. */
function softwareTokenSlot(): number {
  const config = fs.readFileSync(configFile, 'utf8');
  const match = /slot\s+(\d+)\s*\{[^}]*stdll\s*=\s*libpkcs11_sw\.so/.exec(config);
  if (!match) throw new Error(`${configFile} has no slot with libpkcs11_sw.so`);
  return Number(match[1]);
}

/**
 * The software token of a pkcsslotd started for the test. `start` sets aside the token
 * directory and shared memory found there; `stop` stops the daemon and puts them back.
 */
export class OpenCryptokiLab {
  private readonly slot = softwareTokenSlot();
  private readonly suffix = `.esign-test-${process.pid}`;
  private readonly setAside: string[] = [];
  private launched = false;
  private pid: number | undefined;

  async start(): Promise<void> {
    for (const file of [tokenDir, ...sharedMemory]) {
      if (!fs.existsSync(file)) continue;
      fs.renameSync(file, file + this.suffix);
      this.setAside.push(file);
    }
    const group = groupId('pkcs11');
    for (const dir of [
      path.join(tokenDir, 'TOK_OBJ'),
      '/var/lock/opencryptoki/swtok',
      '/var/log/opencryptoki',
    ]) {
      // /var/lock is a fresh tmpfs in a container: the package's directories may be gone.
      fs.mkdirSync(dir, { recursive: true, mode: 0o770 });
      for (let at = dir; at !== '/var/lib' && at !== '/var/lock' && at !== '/var/log'; ) {
        fs.chownSync(at, 0, group);
        fs.chmodSync(at, 0o770);
        at = path.dirname(at);
      }
    }
    run(daemon, []);
    this.launched = true;
    this.pid = await daemonPid();
  }

  /** Initialises the token with `token`'s label, SO PIN and user PIN (none to be changed). */
  initToken(token: TestToken): void {
    const result = spawnSync(pkcsconf, ['-c', `${this.slot}`, '-I', '-S', defaultSoPin], {
      input: `${token.label}\n`,
      encoding: 'utf8',
    });
    if (result.status !== 0) throw new Error(`pkcsconf -I: ${result.stdout}${result.stderr}`);
    this.pkcsconf(['-P', '-S', defaultSoPin, '-n', token.soPin]);
    this.resetUserPin(token);
  }

  /** The SO sets the user PIN again (C_InitPIN), which also unlocks it. */
  resetUserPin(token: TestToken): void {
    // C_InitPIN leaves CKF_USER_PIN_TO_BE_CHANGED; a change by the user clears it.
    const interim = token.pin === '0000' ? '1111' : '0000';
    this.pkcsconf(['-u', '-S', token.soPin, '-n', interim]);
    this.pkcsconf(['-p', '-U', interim, '-n', token.pin]);
  }

  /**
   * A C_Login with `pin` by another program (pkcsconf changing the user PIN): its return value,
   * which pkcsconf exits with (CKR_PIN_INCORRECT 0xa0, CKR_PIN_LOCKED 0xa4).
   */
  otherLogin(pin: string): number {
    const args = ['-c', `${this.slot}`, '-p', '-U', pin, '-n', pin];
    const result = spawnSync(pkcsconf, args, { encoding: 'utf8' });
    if (result.status === null) throw new Error(`pkcsconf: ${result.error ?? result.signal}`);
    return result.status;
  }

  private pkcsconf(args: string[]): void {
    run(pkcsconf, ['-c', `${this.slot}`, ...args]);
  }

  async stop(): Promise<void> {
    // A start that failed half way may have left the daemon running without its pid known.
    if (this.launched) this.pid ??= await daemonPid().catch(() => undefined);
    if (this.pid !== undefined) {
      process.kill(this.pid, 'SIGTERM');
      for (let waited = 0; runningDaemon() === this.pid; waited += 50) {
        if (waited > 10_000) throw new Error(`pkcsslotd ${this.pid} did not stop`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // pkcsslotd removes its socket but leaves its pid file.
      fs.rmSync(pidFile, { force: true });
      fs.rmSync(socketFile, { force: true });
      this.pid = undefined;
    }
    this.launched = false;
    for (const file of [tokenDir, ...sharedMemory])
      fs.rmSync(file, { recursive: true, force: true });
    for (const file of this.setAside.splice(0)) fs.renameSync(file + this.suffix, file);
  }
}

function groupId(name: string): number {
  const line = fs
    .readFileSync('/etc/group', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${name}:`));
  if (!line) throw new Error(`no group ${name}: is opencryptoki installed?`);
  return Number(line.split(':')[2]);
}
