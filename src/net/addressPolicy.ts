import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

// Where svc may send a customer's webhooks: only public unicast addresses, unless development
// mode (SVC_ALLOW_PRIVATE_CALLBACKS) allows the rest. This stops a callback URL from reaching
// into our own network (SSRF): loopback, private, link-local and cloud metadata addresses.

const PUBLIC_RANGES = new Set(['unicast', 'as112', 'as112v6', 'amt']);

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (cloud metadata lives here)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  reserved: 'a reserved address',
  uniqueLocal: 'a private (unique local) address',
  deprecatedSiteLocal: 'a site-local address',
};

/** The IP address as svc reads it: ::ffff:127.0.0.1 is 127.0.0.1. */
function parsedAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) return (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed;
}

/**
 * What kind of address this is when svc must not connect to it ("a loopback address", …), or
 * undefined if it may. Without the address itself: what a host name resolves to inside our
 * network is not the customer's to learn.
 */
export function forbiddenAddressKind(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = parsedAddress(address);
  const range = parsed.range();
  // ::a.b.c.d (IPv4-compatible, deprecated) embeds an IPv4 address that ipaddr.js calls unicast.
  if (range === 'unicast' && parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) {
    return 'an IPv4-compatible IPv6 address';
  }
  if (PUBLIC_RANGES.has(range)) return undefined;
  return RANGE_NAMES[range] ?? `a special-purpose address (${range})`;
}

/** Why svc must not connect to this IP address (one the customer wrote), or undefined if it may. */
export function forbiddenAddressReason(address: string): string | undefined {
  const kind = forbiddenAddressKind(address);
  if (kind === undefined || !ipaddr.isValid(address)) return kind;
  return `${parsedAddress(address).toString()} is ${kind}`;
}

export class ForbiddenAddressError extends Error {
  override name = 'ForbiddenAddressError';
  readonly code = 'forbidden_address';
}

type LookupFn = (
  hostname: string,
  options: { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** A URL's host without the brackets of an IPv6 literal. */
export function bareHost(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Whether a URL's host is an IP address written out rather than a name. */
export function isLiteralAddress(host: string): boolean {
  return ipaddr.isValid(bareHost(host));
}

/** Resolves a host name (or takes a literal IP) to every address it has. */
export function resolveAll(host: string, lookup: LookupFn = dnsLookup as LookupFn): Promise<LookupAddress[]> {
  const bare = bareHost(host);
  if (ipaddr.isValid(bare)) return Promise.resolve([{ address: bare, family: bare.includes(':') ? 6 : 4 }]);
  return new Promise((resolve, reject) => {
    lookup(bare, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

/**
 * Resolves the host and checks every address it has. Throws ForbiddenAddressError when any is
 * forbidden (a name with one public and one private address is refused: the connection could
 * go to either). Returns the addresses to connect to.
 */
export async function resolveAllowedAddresses(
  host: string,
  allowPrivate: boolean,
  lookup?: LookupFn,
): Promise<LookupAddress[]> {
  const addresses = await resolveAll(host, lookup);
  if (addresses.length === 0) throw new Error(`${host} has no address`);
  if (allowPrivate) return addresses;
  const literal = isLiteralAddress(host);
  for (const { address } of addresses) {
    const kind = forbiddenAddressKind(address);
    if (kind === undefined) continue;
    throw new ForbiddenAddressError(literal ? forbiddenAddressReason(address)! : `${host} resolves to ${kind}`);
  }
  return addresses;
}

/**
 * A `lookup` for net.connect/undici that checks what it resolves, so the connection goes to the
 * very address that was checked: no window for DNS rebinding between check and connect.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (
    hostname: string,
    options: { all?: boolean; family?: number | string },
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    resolveAllowedAddresses(hostname, allowPrivate).then(
      (addresses) => {
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, options.all ? [] : ''),
    );
  };
}
