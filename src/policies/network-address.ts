/**
 * What kind of network an IP address belongs to, and whether a `url` part may be fetched from it (the fetch
 * policy of docs/attachments.md). Pure: the caller resolves names and connects; this only judges addresses.
 */

/** The kinds of address the fetch policy tells apart; only `public` is fetched by default. */
export const addressKinds = [
  'public',
  /** 127.0.0.0/8, ::1 */
  'loopback',
  /** RFC 1918: 10/8, 172.16/12, 192.168/16 (and the deprecated IPv6 site-local fec0::/10) */
  'private',
  /** RFC 6598 carrier-grade NAT: 100.64.0.0/10 */
  'shared',
  /** fc00::/7 */
  'unique-local',
  /** 169.254.0.0/16 (the cloud metadata service 169.254.169.254), fe80::/10 */
  'link-local',
  /** 224.0.0.0/4, ff00::/8 */
  'multicast',
  /** 0.0.0.0/8, :: */
  'unspecified',
  /** Documentation, benchmarking, broadcast, future use, Teredo, discard-only and other special-purpose blocks */
  'reserved',
] as const;

/** One kind of address. */
export type AddressKind = (typeof addressKinds)[number];

/** The kinds `allowPrivateNetworks` opens: networks of one's own, never loopback, link-local or the rest. */
export const privateNetworkKinds: readonly AddressKind[] = ['private', 'shared', 'unique-local'];

/** Who may be fetched besides public addresses (the `attachments.fetch` options). */
export interface FetchPolicy {
  /** Host names (`*.example.com` covers subdomains) and IP literals fetched whatever they resolve to. */
  readonly allowHosts: readonly string[];
  /** Also fetch from private (RFC 1918), carrier-grade NAT and unique-local addresses. */
  readonly allowPrivateNetworks: boolean;
}

/** The policy when nothing is allowed: public addresses only. */
export const publicOnlyPolicy: FetchPolicy = { allowHosts: [], allowPrivateNetworks: false };

/** The four bytes of a dotted-decimal IPv4 address; undefined for anything else. */
export function parseIpv4(text: string): number[] | undefined {
  const pieces = text.split('.');
  if (pieces.length !== 4) return undefined;
  const bytes = pieces.map((piece) => (/^(0|[1-9][0-9]{0,2})$/.test(piece) ? Number(piece) : Number.NaN));
  return bytes.every((byte) => byte >= 0 && byte <= 255) ? bytes : undefined;
}

/** The 16-bit groups of one side of an IPv6 `::`; an embedded IPv4 tail counts as two. */
function ipv6Groups(text: string, tailMayBeIpv4: boolean): number[] | undefined {
  if (text === '') return [];
  const pieces = text.split(':');
  const groups: number[] = [];
  for (const [index, piece] of pieces.entries()) {
    if (tailMayBeIpv4 && index === pieces.length - 1 && piece.includes('.')) {
      const bytes = parseIpv4(piece);
      if (bytes === undefined) return undefined;
      groups.push(((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0), ((bytes[2] ?? 0) << 8) | (bytes[3] ?? 0));
    } else if (/^[0-9a-f]{1,4}$/i.test(piece)) groups.push(Number.parseInt(piece, 16));
    else return undefined;
  }
  return groups;
}

/** The eight 16-bit groups of an IPv6 address (brackets and a `%zone` allowed); undefined for anything else. */
export function parseIpv6(text: string): number[] | undefined {
  let bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = bare.indexOf('%');
  if (zone > 0) bare = bare.slice(0, zone);
  if (!bare.includes(':')) return undefined;
  const halves = bare.split('::');
  if (halves.length > 2) return undefined;
  const head = ipv6Groups(halves[0] ?? '', halves.length === 1);
  const tail = halves.length === 2 ? ipv6Groups(halves[1] ?? '', true) : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  return [...head, ...Array<number>(missing).fill(0), ...tail];
}

/** The kind of an IPv4 address given as four bytes. */
function ipv4Kind([a = 0, b = 0, c = 0]: readonly number[]): AddressKind {
  if (a === 0) return 'unspecified';
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'shared';
  if (a === 169 && b === 254) return 'link-local';
  if (a >= 224 && a <= 239) return 'multicast';
  const reserved =
    a >= 240 || // 240/4 future use, 255.255.255.255 broadcast
    (a === 192 && b === 0 && (c === 0 || c === 2)) || // 192.0.0/24 protocol assignments, 192.0.2/24 TEST-NET-1
    (a === 192 && b === 88 && c === 99) || // 6to4 relay anycast
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    (a === 198 && b === 51 && c === 100) || // TEST-NET-2
    (a === 203 && b === 0 && c === 113); // TEST-NET-3
  return reserved ? 'reserved' : 'public';
}

/** The IPv4 address in the low 32 bits of `groups`, as bytes. */
function lowIpv4(groups: readonly number[], from = 6): number[] {
  const high = groups[from] ?? 0;
  const low = groups[from + 1] ?? 0;
  return [high >> 8, high & 0xff, low >> 8, low & 0xff];
}

/** The kind of an IPv6 address given as eight groups; addresses that carry an IPv4 one are judged by it. */
function ipv6Kind(groups: readonly number[]): AddressKind {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (upperZero && g5 === 0 && g6 === 0 && g7 === 0) return 'unspecified';
  if (upperZero && g5 === 0 && g6 === 0 && g7 === 1) return 'loopback';
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), ::ffff:0:a.b.c.d (translated)
  if (upperZero && (g5 === 0xffff || g5 === 0)) return ipv4Kind(lowIpv4(groups));
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0)
    return ipv4Kind(lowIpv4(groups));
  // 64:ff9b::/96 NAT64 reaches the IPv4 address it carries; 64:ff9b:1::/48 is for local use.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return ipv4Kind(lowIpv4(groups));
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'private';
  if (g0 === 0x2002) return ipv4Kind(lowIpv4(groups, 1)); // 6to4 carries an IPv4 address in bits 16-47
  if ((g0 & 0xfe00) === 0xfc00) return 'unique-local';
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'private';
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  const reserved =
    (g0 === 0x2001 && g1 === 0) || // Teredo (its IPv4 address is hidden)
    (g0 === 0x2001 && g1 === 0xdb8) || // documentation
    (g0 === 0x3fff && g1 <= 0x0fff) || // documentation (RFC 9637)
    (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) || // discard-only
    g0 === 0 || // the rest of ::/16 (unassigned, or IPv4-embedding forms above)
    (g0 & 0xe000) !== 0x2000; // outside 2000::/3, the global unicast space
  return reserved ? 'reserved' : 'public';
}

/** The kind of an IP address (IPv4 dotted-decimal, or IPv6 in any notation); undefined when it is not one. */
export function classifyAddress(address: string): AddressKind | undefined {
  const ipv4 = parseIpv4(address);
  if (ipv4 !== undefined) return ipv4Kind(ipv4);
  const ipv6 = parseIpv6(address);
  return ipv6 === undefined ? undefined : ipv6Kind(ipv6);
}

/** A host as compared: lower-case, no brackets, no trailing dot, an IPv6 literal in one canonical form. */
export function normalizeHost(host: string): string {
  const lower = host.trim().toLowerCase().replace(/\.$/, '');
  const ipv6 = parseIpv6(lower);
  if (ipv6 !== undefined) return ipv6.map((group) => group.toString(16)).join(':');
  return lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
}

/** True when `host` (a URL's host name) is named by `allowHosts`: exactly, or below a `*.` entry. */
export function hostAllowed(host: string, allowHosts: readonly string[]): boolean {
  const name = normalizeHost(host);
  return allowHosts.some((entry) => {
    if (entry.startsWith('*.')) return name.endsWith(normalizeHost(entry.slice(1)));
    return normalizeHost(entry) === name;
  });
}

/** True when an address of `kind` may be connected to under `policy` (for a host `allowHosts` does not name). */
export function addressKindAllowed(kind: AddressKind | undefined, policy: FetchPolicy): boolean {
  if (kind === undefined) return false;
  return kind === 'public' || (policy.allowPrivateNetworks && privateNetworkKinds.includes(kind));
}

/** True when `address` (an IP address a name resolved to, or a literal) may be connected to under `policy`. */
export function addressAllowed(address: string, policy: FetchPolicy): boolean {
  return addressKindAllowed(classifyAddress(address), policy);
}
