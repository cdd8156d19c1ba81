import net from 'node:net';
import { ConfigError } from '../errors/configError';

/**
 * Which IP addresses the server may open an outbound connection to (file downloads, webhooks).
 * Only public unicast addresses pass; an operator allowlist (`OUTBOUND_ALLOWLIST`) can let
 * named hosts or address ranges through. IPv6 forms that carry an IPv4 address (mapped, NAT64,
 * 6to4) are judged by that IPv4 address, whatever their textual form.
 */

interface IpRange {
  /** 4 or 16 bytes. */
  readonly bytes: Uint8Array;
  readonly prefix: number;
}

interface LabelledRange extends IpRange {
  readonly label: string;
}

/** The IPv4 ranges that are not publicly routable unicast (IANA special-purpose registry). */
const refusedIPv4: readonly LabelledRange[] = [
  range('0.0.0.0/8', 'unspecified ("this network")'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'shared address space (CGNAT)'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local (incl. cloud metadata)'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'IETF protocol assignments'),
  range('192.0.2.0/24', 'documentation (TEST-NET-1)'),
  range('192.88.99.0/24', '6to4 relay anycast'),
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'benchmarking'),
  range('198.51.100.0/24', 'documentation (TEST-NET-2)'),
  range('203.0.113.0/24', 'documentation (TEST-NET-3)'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved (incl. broadcast)'),
];

/** IPv6 ranges whose last 32 bits (or bits 16..47 for 6to4) are an IPv4 address judged instead. */
const mappedIPv6 = range('::ffff:0:0/96', 'IPv4-mapped');
const nat64IPv6 = range('64:ff9b::/96', 'NAT64');
const sixToFourIPv6 = range('2002::/16', '6to4');

/** Only global unicast (2000::/3) may pass; inside it these are still refused. */
const globalUnicastIPv6 = range('2000::/3', 'global unicast');
const refusedGlobalIPv6: readonly LabelledRange[] = [
  range('2001::/23', 'IETF protocol assignments (Teredo, benchmarking, ORCHID)'),
  range('2001:db8::/32', 'documentation'),
  range('3fff::/20', 'documentation'),
];

/** Names for the refused IPv6 space outside 2000::/3, for messages and logs. */
const outsideGlobalIPv6: readonly LabelledRange[] = [
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('::/96', 'IPv4-compatible (deprecated)'),
  range('::ffff:0:0:0/96', 'IPv4-translated'),
  range('64:ff9b:1::/48', 'local-use NAT64'),
  range('100::/64', 'discard-only'),
  range('fc00::/7', 'unique local (private)'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'site-local (deprecated)'),
  range('ff00::/8', 'multicast'),
];

function range(cidr: string, label: string): LabelledRange {
  const parsed = parseCidr(cidr);
  if (parsed === null) throw new Error(`bad built-in range ${cidr}`);
  return { ...parsed, label: `${label} ${cidr}` };
}

/** Bytes of an IPv4 or IPv6 literal (no brackets, no zone), or null when it is not one. */
export function ipBytes(ip: string): Uint8Array | null {
  const family = net.isIP(ip);
  if (family === 4) return Uint8Array.from(ip.split('.').map(Number));
  if (family === 6 && !ip.includes('%')) return ipv6Bytes(ip);
  return null;
}

function ipv6Bytes(ip: string): Uint8Array {
  const groups = (part: string): number[] => {
    if (part === '') return [];
    const words: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = piece.split('.').map(Number);
        words.push((a << 8) | b, (c << 8) | d);
      } else {
        words.push(Number.parseInt(piece, 16));
      }
    }
    return words;
  };
  const [head = '', tail] = ip.split('::');
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const words = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  words.forEach((word, i) => {
    bytes[2 * i] = word >> 8;
    bytes[2 * i + 1] = word & 0xff;
  });
  return bytes;
}

function parseCidr(cidr: string): IpRange | null {
  const slash = cidr.indexOf('/');
  const address = slash === -1 ? cidr : cidr.slice(0, slash);
  const bytes = ipBytes(address);
  if (bytes === null) return null;
  const maxPrefix = bytes.length * 8;
  const prefixText = slash === -1 ? String(maxPrefix) : cidr.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  if (prefix > maxPrefix) return null;
  return { bytes, prefix };
}

function inRange(bytes: Uint8Array, r: IpRange): boolean {
  if (bytes.length !== r.bytes.length) return false;
  let bits = r.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((r.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

function refusedIPv4Range(bytes: Uint8Array): string | null {
  return refusedIPv4.find((r) => inRange(bytes, r))?.label ?? null;
}

/**
 * Why an address may not be connected to (the label of the refusing range), or null when it is
 * a public unicast address. Anything that is not an IP literal is refused.
 */
export function refusedRange(ip: string): string | null {
  const bytes = ipBytes(ip);
  if (bytes === null) return 'not an IP address';
  if (bytes.length === 4) return refusedIPv4Range(bytes);
  for (const carrier of [mappedIPv6, nat64IPv6]) {
    if (inRange(bytes, carrier)) {
      const inner = refusedIPv4Range(bytes.subarray(12, 16));
      return inner === null ? null : `${carrier.label} of ${inner}`;
    }
  }
  if (inRange(bytes, sixToFourIPv6)) {
    const inner = refusedIPv4Range(bytes.subarray(2, 6));
    return inner === null ? null : `${sixToFourIPv6.label} of ${inner}`;
  }
  if (!inRange(bytes, globalUnicastIPv6)) {
    return outsideGlobalIPv6.find((r) => inRange(bytes, r))?.label ?? 'not global unicast';
  }
  return refusedGlobalIPv6.find((r) => inRange(bytes, r))?.label ?? null;
}

export function isPublicAddress(ip: string): boolean {
  return refusedRange(ip) === null;
}

/** Operator exceptions: exact host names (lower case, no trailing dot) and address ranges. */
export interface Allowlist {
  readonly hosts: ReadonlySet<string>;
  readonly ranges: readonly IpRange[];
}

export const emptyAllowlist: Allowlist = { hosts: new Set(), ranges: [] };

/** Host name as compared with the allowlist: lower case, without brackets or a trailing dot. */
export function normalizeHost(host: string): string {
  const unbracketed = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return unbracketed.toLowerCase().replace(/\.$/, '');
}

/**
 * Parses `OUTBOUND_ALLOWLIST`: comma-separated host names (matched exactly, no wildcards) or
 * IP addresses / CIDR ranges (IPv6 may be bracketed). Empty means no exceptions. A bad entry
 * is a configuration error, so a typo cannot silently open or close anything.
 */
export function parseAllowlist(raw: string): Allowlist {
  const hosts = new Set<string>();
  const ranges: IpRange[] = [];
  for (const entry of raw.split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const unbracketed = entry.replace(/^\[([^\]]*)\](\/\d+)?$/, '$1$2');
    if (/^[\d.]+(\/\d+)?$/.test(unbracketed) || unbracketed.includes(':')) {
      const parsed = parseCidr(unbracketed);
      if (parsed === null) {
        throw new ConfigError(`OUTBOUND_ALLOWLIST: "${entry}" is not an IP address or CIDR`);
      }
      ranges.push(parsed);
      continue;
    }
    hosts.add(hostEntry(entry));
  }
  return { hosts, ranges };
}

function hostEntry(entry: string): string {
  let url: URL | null = null;
  try {
    url = new URL(`https://${entry}/`);
  } catch {
    url = null;
  }
  if (
    url === null ||
    url.host !== url.hostname ||
    url.pathname !== '/' ||
    url.username !== '' ||
    net.isIP(url.hostname) !== 0 ||
    !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/.test(url.hostname)
  ) {
    throw new ConfigError(`OUTBOUND_ALLOWLIST: "${entry}" is not a host name, IP or CIDR`);
  }
  return normalizeHost(url.hostname);
}

/** The address as the allowlist sees it: an IPv4-mapped IPv6 address is its IPv4 address. */
function allowlistForms(bytes: Uint8Array): Uint8Array[] {
  return bytes.length === 16 && inRange(bytes, mappedIPv6) ? [bytes, bytes.subarray(12)] : [bytes];
}

export function isAllowlistedAddress(ip: string, allowlist: Allowlist): boolean {
  const bytes = ipBytes(ip);
  if (bytes === null) return false;
  return allowlistForms(bytes).some((form) => allowlist.ranges.some((r) => inRange(form, r)));
}

export function isAllowlistedHost(host: string, allowlist: Allowlist): boolean {
  return allowlist.hosts.has(normalizeHost(host));
}

/**
 * The one decision: may a connection for `host` (the URL's host name, or null for an IP
 * literal) go to `ip`? A listed host name lets every address it resolves to through.
 */
export function mayConnect(ip: string, host: string | null, allowlist: Allowlist): boolean {
  if (host !== null && isAllowlistedHost(host, allowlist)) return true;
  return isAllowlistedAddress(ip, allowlist) || isPublicAddress(ip);
}
