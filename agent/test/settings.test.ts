import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AGENT_DEFAULT_PORT } from '@esign/shared';
import {
  type AgentHostInfo,
  type AgentSettings,
  ConfigurationError,
  checkSettings,
  defaultPkcs11Modules,
  defaultSettings,
  loadSettings,
  saveSettings,
  settingsFilePath,
} from '../src/core';

const linux: AgentHostInfo = { platform: 'linux', arch: 'x64', env: {}, homeDir: '/home/an' };
const linuxArm: AgentHostInfo = { ...linux, arch: 'arm64' };
const windows: AgentHostInfo = {
  platform: 'win32',
  arch: 'x64',
  env: { SystemRoot: 'C:\\Windows', APPDATA: 'C:\\Users\\An\\AppData\\Roaming' },
  homeDir: 'C:\\Users\\An',
};
const macos: AgentHostInfo = { platform: 'darwin', arch: 'arm64', env: {}, homeDir: '/Users/an' };

/** Settings checked, or a throw with the reason they were refused. */
function parsed(raw: unknown, host: AgentHostInfo): AgentSettings {
  const checked = checkSettings(raw, host);
  if (!checked.ok) throw new Error(checked.reason);
  return checked.settings;
}

const paths = (host: AgentHostInfo) => defaultPkcs11Modules(host).map((entry) => entry.path);

describe('default settings', () => {
  it('listen on the protocol default port with no origin allowed in advance', () => {
    const settings = defaultSettings(linux);
    expect(settings.port).toBe(AGENT_DEFAULT_PORT);
    expect(settings.port).toBe(17891);
    expect(settings.allowedOrigins).toEqual([]);
  });

  it('load SoftHSM2 on Linux from both the plain and the multiarch path', () => {
    expect(paths(linux)).toEqual(
      expect.arrayContaining([
        '/usr/lib/softhsm/libsofthsm2.so',
        '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so',
      ]),
    );
    expect(paths(linuxArm)).toContain('/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so');
  });

  it('know the Vietnamese CAs and SafeNet eToken on Windows, in System32', () => {
    const modules = defaultPkcs11Modules(windows);
    const labels = modules.map((entry) => entry.label);
    for (const vendor of ['VNPT-CA', 'Viettel-CA', 'BKAV-CA', 'FPT-CA', 'SafeNet eToken']) {
      expect(labels).toContain(vendor);
    }
    expect(paths(windows)).toEqual(
      expect.arrayContaining([
        'C:\\Windows\\System32\\vnptca_p11_v8.dll',
        'C:\\Windows\\System32\\viettel-ca_v6.dll',
        'C:\\Windows\\System32\\BkavCA.dll',
        'C:\\Windows\\System32\\fpt-ca.dll',
        'C:\\Windows\\System32\\eTPKCS11.dll',
      ]),
    );
  });

  it('follow %SystemRoot% on Windows', () => {
    const host = { ...windows, env: { SystemRoot: 'D:\\WINNT' } };
    expect(paths(host)).toContain('D:\\WINNT\\System32\\eTPKCS11.dll');
  });

  it('know SafeNet eToken on macOS and Linux', () => {
    expect(paths(macos)).toContain('/usr/local/lib/libeTPkcs11.dylib');
    expect(paths(linux)).toContain('/usr/lib/libeTPkcs11.so');
  });

  it.each([
    ['linux', linux],
    ['windows', windows],
    ['macos', macos],
  ])('on %s are absolute, distinct, enabled and marked built-in', (_name, host) => {
    const modules = defaultPkcs11Modules(host);
    expect(modules.length).toBeGreaterThan(3);
    expect(new Set(modules.map((entry) => entry.path)).size).toBe(modules.length);
    for (const entry of modules) {
      const absolute =
        host.platform === 'win32' ? path.win32.isAbsolute(entry.path) : entry.path.startsWith('/');
      expect(absolute).toBe(true);
      expect(entry).toMatchObject({ enabled: true, builtIn: true });
    }
  });

  it('are empty for platforms without known modules', () => {
    expect(defaultPkcs11Modules({ ...linux, platform: 'freebsd' })).toEqual([]);
  });
});

describe('settings checks', () => {
  it('fill what the file lacks from the defaults', () => {
    expect(parsed({}, linux)).toEqual(defaultSettings(linux));
    expect(parsed({ port: 20000 }, linux)).toEqual({
      ...defaultSettings(linux),
      port: 20000,
    });
  });

  it('keep the user module list instead of the defaults, marking added entries', () => {
    const settings = parsed(
      { pkcs11Modules: [{ label: 'Token A', path: '/opt/a/libp11.so' }] },
      linux,
    );
    expect(settings.pkcs11Modules).toEqual([
      {
        label: 'Token A',
        path: '/opt/a/libp11.so',
        enabled: true,
        builtIn: false,
        avoidMechanisms: [],
      },
    ]);
  });

  it('keep the mechanisms support staff tell a module to avoid, and refuse unknown names', () => {
    const settings = parsed(
      {
        pkcs11Modules: [
          {
            label: 'VNPT-CA',
            path: '/opt/vnpt/libp11.so',
            avoidMechanisms: ['CKM_SHA256_RSA_PKCS', 'CKM_SHA256_RSA_PKCS'],
          },
        ],
      },
      linux,
    );
    expect(settings.pkcs11Modules[0]!.avoidMechanisms).toEqual(['CKM_SHA256_RSA_PKCS']);
    expect(() =>
      parsed(
        { pkcs11Modules: [{ label: 'A', path: '/a.so', avoidMechanisms: ['SHA256_RSA_PKCS'] }] },
        linux,
      ),
    ).toThrow(
      'pkcs11Modules[0].avoidMechanisms[0] must be one of CKM_SHA256_RSA_PKCS, CKM_RSA_PKCS, CKM_ECDSA, CKM_ECDSA_SHA256, got "SHA256_RSA_PKCS"',
    );
  });

  it('normalize and deduplicate allowed origins', () => {
    const settings = parsed(
      {
        allowedOrigins: [
          'https://ESign.example.vn/',
          'https://esign.example.vn',
          'http://localhost:3000',
        ],
      },
      linux,
    );
    expect(settings.allowedOrigins).toEqual(['https://esign.example.vn', 'http://localhost:3000']);
  });

  it.each([
    ['a string port', { port: '17891' }, 'port must be an integer from 1024 to 65535'],
    ['a privileged port', { port: 80 }, 'port must be an integer from 1024 to 65535'],
    [
      'origins that are not a list',
      { allowedOrigins: 'https://a.vn' },
      'allowedOrigins must be an array',
    ],
    ['an empty origin', { allowedOrigins: [''] }, 'allowedOrigins[0] must be a non-empty string'],
    [
      'a module without label',
      { pkcs11Modules: [{ path: '/a.so' }] },
      'pkcs11Modules[0].label must be',
    ],
    [
      'a relative module path',
      { pkcs11Modules: [{ label: 'x', path: 'lib/a.so' }] },
      'pkcs11Modules[0].path must be an absolute path',
    ],
    [
      'a string flag',
      { pkcs11Modules: [{ label: 'x', path: '/a.so', enabled: 'yes' }] },
      'pkcs11Modules[0].enabled must be true or false',
    ],
    ['a list instead of an object', [], 'settings must be an object'],
  ])('refuse %s', (_name, raw, message) => {
    expect(checkSettings(raw, linux)).toEqual({
      ok: false,
      reason: expect.stringContaining(message),
    });
  });

  it('drop fields they do not know (a newer agent may have written them)', () => {
    expect(parsed({ theme: 'dark', port: 18000 }, linux)).toEqual({
      ...defaultSettings(linux),
      port: 18000,
    });
  });

  it('name the entry of a refused origin', () => {
    expect(() => parsed({ allowedOrigins: ['https://a.vn', 'http://b.vn'] }, linux)).toThrow(
      'allowedOrigins[1] "http://b.vn" must use https (http only for localhost)',
    );
  });

  it('refuse a null where a value belongs rather than take the default', () => {
    expect(() => parsed({ port: null }, linux)).toThrow(
      'port must be an integer from 1024 to 65535, got null',
    );
    expect(() => parsed({ pkcs11Modules: null }, linux)).toThrow('pkcs11Modules must be an array');
  });

  it('judge module paths by the platform the agent runs on', () => {
    const entry = { label: 'VNPT-CA', path: 'C:\\Windows\\System32\\vnptca_p11_v8.dll' };
    expect(parsed({ pkcs11Modules: [entry] }, windows).pkcs11Modules[0]?.path).toBe(entry.path);
    expect(() => parsed({ pkcs11Modules: [entry] }, linux)).toThrow('must be an absolute path');
  });
});

describe('settings file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'agent-settings-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lives where Electron keeps the product user data', () => {
    expect(settingsFilePath(linux)).toBe('/home/an/.config/ESign Agent/settings.json');
    expect(settingsFilePath({ ...linux, env: { XDG_CONFIG_HOME: '/cfg' } })).toBe(
      '/cfg/ESign Agent/settings.json',
    );
    expect(settingsFilePath(macos)).toBe(
      '/Users/an/Library/Application Support/ESign Agent/settings.json',
    );
    expect(settingsFilePath(windows)).toBe(
      'C:\\Users\\An\\AppData\\Roaming\\ESign Agent\\settings.json',
    );
  });

  it('gives the defaults when missing', async () => {
    expect(await loadSettings(path.join(dir, 'none.json'), linux)).toEqual(defaultSettings(linux));
  });

  it('reads back what was saved, creating the folder, readable by the user only', async () => {
    const file = path.join(dir, 'nested', 'settings.json');
    const settings = {
      ...defaultSettings(linux),
      port: 18000,
      allowedOrigins: ['https://esign.example.vn'],
    };
    settings.pkcs11Modules[0] = { ...settings.pkcs11Modules[0]!, enabled: false };
    await saveSettings(file, settings);
    expect(await loadSettings(file, linux)).toEqual(settings);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).toMatch(/^\{\n {2}"port": 18000,/);
  });

  it('names the file when it is broken', async () => {
    const file = path.join(dir, 'settings.json');
    await writeFile(file, '{"port": ');
    await expect(loadSettings(file, linux)).rejects.toThrow(ConfigurationError);
    await expect(loadSettings(file, linux)).rejects.toThrow(`${file} is not valid JSON`);
    await writeFile(file, '{"port": 1}');
    await expect(loadSettings(file, linux)).rejects.toThrow(`${file}: port must be an integer`);
  });
});
