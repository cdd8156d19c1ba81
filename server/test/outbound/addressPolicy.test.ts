import {
  emptyAllowlist,
  isPublicAddress,
  mayConnect,
  parseAllowlist,
  refusedRange,
} from '../../src/outbound/addressPolicy';
import { ConfigError } from '../../src/platform/config';

/** [address, why it is refused] */
const refused: [string, string][] = [
  // IPv4
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['100.64.0.1', 'CGNAT'],
  ['100.127.255.254', 'CGNAT'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.0.1', 'link-local'],
  ['169.254.169.254', 'link-local'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.0.0.8', 'IETF protocol'],
  ['192.0.2.1', 'documentation'],
  ['192.88.99.1', '6to4 relay'],
  ['192.168.0.1', 'private'],
  ['192.168.255.255', 'private'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  // IPv6
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::ffff:127.0.0.1', 'IPv4-mapped'],
  ['::ffff:7f00:1', 'IPv4-mapped ::ffff:0:0/96 of loopback'],
  ['0:0:0:0:0:ffff:7f00:0001', 'IPv4-mapped'],
  ['::FFFF:7F00:1', 'IPv4-mapped'],
  ['::ffff:10.0.0.1', 'IPv4-mapped'],
  ['::ffff:a9fe:a9fe', 'IPv4-mapped ::ffff:0:0/96 of link-local'],
  ['::ffff:0.0.0.0', 'IPv4-mapped'],
  ['::127.0.0.1', 'IPv4-compatible'],
  ['::8.8.8.8', 'IPv4-compatible'],
  ['::ffff:0:8.8.8.8', 'IPv4-translated'],
  ['64:ff9b::a00:1', 'NAT64 64:ff9b::/96 of private'],
  ['64:ff9b::127.0.0.1', 'NAT64'],
  ['64:ff9b::a9fe:a9fe', 'NAT64'],
  ['64:ff9b:1::8.8.8.8', 'local-use NAT64'],
  ['64:ff9b:1:ffff::1', 'local-use NAT64'],
  ['2002:7f00:1::', '6to4 2002::/16 of loopback'],
  ['2002:a00:1::1', '6to4'],
  ['2002:c0a8:101::1', '6to4'],
  ['2001::1', 'Teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2001:2::1', 'benchmarking'],
  ['2001:10::1', 'ORCHID'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['100::1', 'discard-only'],
  ['fc00::1', 'unique local'],
  ['fd12:3456:789a::1', 'unique local'],
  ['fe80::1', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fec0::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['ff0e::1', 'multicast'],
  ['4000::1', 'not global unicast'],
  ['fe80::1%eth0', 'not an IP'],
  // Not IP literals at all
  ['localhost', 'not an IP'],
  ['', 'not an IP'],
  ['127.1', 'not an IP'],
  ['0x7f.0.0.1', 'not an IP'],
  ['[::1]', 'not an IP'],
];

const allowed: string[] = [
  '1.1.1.1',
  '8.8.8.8',
  '93.184.215.14',
  '100.63.255.255',
  '100.128.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.169.0.1',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '169.253.255.255',
  '11.0.0.1',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '2001:4860:4860::8888',
  '2001:200::1',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
];

describe('Outbound address policy: refused ranges', () => {
  it.each(refused)('refuses %s (%s)', (address, why) => {
    const range = refusedRange(address);
    expect(range).not.toBeNull();
    expect(range).toContain(why);
    expect(isPublicAddress(address)).toBe(false);
    expect(mayConnect(address, null, emptyAllowlist)).toBe(false);
  });
});

describe('Outbound address policy: public unicast addresses pass', () => {
  it.each(allowed)('allows %s', (address) => {
    expect(refusedRange(address)).toBeNull();
    expect(mayConnect(address, null, emptyAllowlist)).toBe(true);
  });
});

describe('OUTBOUND_ALLOWLIST', () => {
  it('is empty by default and for blank input', () => {
    for (const raw of ['', ' ', ' , ,']) {
      const list = parseAllowlist(raw);
      expect(list.hosts.size).toBe(0);
      expect(list.ranges).toHaveLength(0);
    }
  });

  it('lets a listed address or CIDR through, and nothing next to it', () => {
    const list = parseAllowlist('127.0.0.1, 10.1.0.0/16 ,fd00::/8, [::1]');
    expect(mayConnect('127.0.0.1', null, list)).toBe(true);
    expect(mayConnect('127.0.0.2', null, list)).toBe(false);
    expect(mayConnect('10.1.200.3', null, list)).toBe(true);
    expect(mayConnect('10.2.0.1', null, list)).toBe(false);
    expect(mayConnect('fd00::5', null, list)).toBe(true);
    expect(mayConnect('fc00::5', null, list)).toBe(false);
    expect(mayConnect('::1', null, list)).toBe(true);
    expect(mayConnect('169.254.169.254', null, list)).toBe(false);
  });

  it('judges an IPv4-mapped address by its IPv4 address', () => {
    const list = parseAllowlist('127.0.0.1');
    expect(mayConnect('::ffff:127.0.0.1', null, list)).toBe(true);
    expect(mayConnect('::ffff:7f00:1', null, list)).toBe(true);
    expect(mayConnect('64:ff9b::7f00:1', null, list)).toBe(false);
  });

  it('lets every address of a listed host name through, compared without case or trailing dot', () => {
    const list = parseAllowlist('Files.Internal.example, localhost');
    expect(list.hosts).toEqual(new Set(['files.internal.example', 'localhost']));
    expect(mayConnect('10.0.0.5', 'files.internal.example.', list)).toBe(true);
    expect(mayConnect('10.0.0.5', 'FILES.internal.example', list)).toBe(true);
    expect(mayConnect('10.0.0.5', 'other.internal.example', list)).toBe(false);
    expect(mayConnect('10.0.0.5', 'sub.files.internal.example', list)).toBe(false);
    expect(mayConnect('127.0.0.1', 'localhost', list)).toBe(true);
    expect(mayConnect('127.0.0.1', null, list)).toBe(false);
  });

  it('normalises international host names to their ASCII form', () => {
    expect(parseAllowlist('tài-liệu.example').hosts).toEqual(
      new Set(['xn--ti-liu-ita8532d.example']),
    );
  });

  it.each([
    '10.0.0.0/33',
    '10.0.0',
    '::1/129',
    'fe80::1%eth0',
    'https://files.example',
    'files.example/path',
    'files.example:443',
    'user@files.example',
    '*.example.com',
    '0x7f.1',
  ])('refuses the bad entry %s at start-up', (entry) => {
    expect(() => parseAllowlist(entry)).toThrow(ConfigError);
  });
});
