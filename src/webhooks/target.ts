// Where a webhook may point: http(s) only, and unless WEBHOOK_ALLOW_PRIVATE_TARGETS, never a
// loopback, private, link-local or otherwise non-public address. Checked at registration (every
// address the hostname resolves to) and again at every connection (the address actually
// dialled), so a hostname re-pointed after registration cannot reach inside the network.
import { lookup as dnsLookup } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const NON_PUBLIC = new BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NON_PUBLIC.addSubnet(prefix, bits, 'ipv4');
for (const [prefix, bits] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) NON_PUBLIC.addSubnet(prefix, bits, 'ipv6');

/** True for addresses a webhook must not reach in production: loopback, private, link-local, reserved. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) is the IPv4 address underneath.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return NON_PUBLIC.check(mapped[1]!, 'ipv4');
  return NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True for loopback addresses (127/8, ::1, and 127/8 mapped into IPv6). */
export function isLoopbackAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return LOOPBACK.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** An address that may be dialled: a public one, or one `allowed` lets through (loopback where a setting allows it). */
export type AddressAllowed = (address: string) => boolean;
const noneAllowed: AddressAllowed = () => false;

/** A URL's host without the brackets of an IPv6 literal. */
export const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Why `host` must not be reached (it resolves to a non-public address `allowed` does not let through), or null. */
export async function hostProblem(host: string, allowed: AddressAllowed = noneAllowed): Promise<string | null> {
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch {
    return `The host ${host} does not resolve.`;
  }
  if (addresses.length === 0 || addresses.some((address) => isNonPublicAddress(address) && !allowed(address))) {
    return 'Must point to a public host; loopback and private-range addresses are refused.';
  }
  return null;
}

/** Why `url` is not an acceptable webhook target, or null when it is. */
export async function targetProblem(url: string, allowPrivate: boolean): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'Must be an absolute http(s) URL.';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'Must be an http or https URL.';
  if (parsed.username || parsed.password) return 'Must not contain credentials.';
  if (allowPrivate) return null;
  return hostProblem(bareHost(parsed));
}

/** A `lookup` for http.request that refuses to connect to a non-public address `allowed` does not let through. */
export const guardedLookup = (allowed: AddressAllowed): LookupFunction => (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    const entries = addresses as unknown as { address: string; family: number }[];
    const refused = entries.find((entry) => isNonPublicAddress(entry.address) && !allowed(entry.address));
    if (refused) return callback(Object.assign(new Error(`refused non-public address ${refused.address}`), { code: 'ENONPUBLIC' }), '', 0);
    if (options.all) return (callback as unknown as (e: null, all: typeof entries) => void)(null, entries);
    callback(null, entries[0]!.address, entries[0]!.family);
  });
};

/** A `lookup` for http.request that refuses to connect to a non-public address. */
export const publicOnlyLookup: LookupFunction = guardedLookup(noneAllowed);
