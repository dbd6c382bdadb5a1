import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addressAllowed,
  classifyAddress,
  hostAllowed,
  parseIpv6,
  type AddressKind,
} from '../../src/policies/network-address.js';

describe('classifyAddress (the pure address classifier of the fetch policy)', () => {
  it('tells every special-purpose IPv4 block apart from public addresses', () => {
    const cases: Record<string, AddressKind> = {
      '0.0.0.0': 'unspecified',
      '0.1.2.3': 'unspecified',
      '127.0.0.1': 'loopback',
      '127.255.255.254': 'loopback',
      '10.0.0.1': 'private',
      '172.16.0.1': 'private',
      '172.31.255.255': 'private',
      '192.168.0.1': 'private',
      '100.64.0.1': 'shared',
      '100.127.255.255': 'shared',
      '169.254.169.254': 'link-local',
      '224.0.0.1': 'multicast',
      '239.255.255.250': 'multicast',
      '255.255.255.255': 'reserved',
      '240.0.0.1': 'reserved',
      '192.0.2.1': 'reserved',
      '198.18.0.1': 'reserved',
      '172.15.255.255': 'public',
      '172.32.0.1': 'public',
      '100.63.255.255': 'public',
      '100.128.0.1': 'public',
      '169.253.0.1': 'public',
      '8.8.8.8': 'public',
      '93.184.215.14': 'public',
    };
    expect(
      Object.fromEntries(Object.keys(cases).map((address) => [address, classifyAddress(address)])),
    ).toEqual(cases);
  });

  it('tells the IPv6 blocks apart, and judges an IPv4 address embedded in IPv6 as that address', () => {
    const cases: Record<string, AddressKind> = {
      '::': 'unspecified',
      '::1': 'loopback',
      '[::1]': 'loopback',
      '0:0:0:0:0:0:0:1': 'loopback',
      '::ffff:127.0.0.1': 'loopback',
      '::ffff:7f00:1': 'loopback',
      '[::ffff:7f00:1]': 'loopback',
      '::127.0.0.1': 'loopback',
      '::ffff:0:127.0.0.1': 'loopback',
      '::ffff:169.254.169.254': 'link-local',
      '::ffff:a9fe:a9fe': 'link-local',
      '::ffff:10.0.0.1': 'private',
      '::ffff:8.8.8.8': 'public',
      '64:ff9b::a9fe:a9fe': 'link-local',
      '64:ff9b::808:808': 'public',
      '64:ff9b:1::1': 'private',
      '2002:7f00:1::': 'loopback',
      '2002:0808:0808::1': 'public',
      'fc00::1': 'unique-local',
      'fd00:ec2::254': 'unique-local',
      'fe80::1': 'link-local',
      'fe80::1%eth0': 'link-local',
      'febf::1': 'link-local',
      'fec0::1': 'private',
      'ff02::1': 'multicast',
      '2001:db8::1': 'reserved',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2': 'reserved',
      '100::1': 'reserved',
      '4000::1': 'reserved',
      '2606:4700:4700::1111': 'public',
      '2a00:1450:4001:81c::200e': 'public',
    };
    expect(
      Object.fromEntries(Object.keys(cases).map((address) => [address, classifyAddress(address)])),
    ).toEqual(cases);
  });

  it('is undefined for what is not an address (which the fetch policy then refuses)', () => {
    for (const text of [
      '',
      'localhost',
      '1.2.3',
      '1.2.3.4.5',
      '256.1.1.1',
      '01.2.3.4',
      '1::2::3',
      ':::',
      'g::1',
    ])
      expect(classifyAddress(text), text).toBeUndefined();
    expect(addressAllowed('localhost', { allowHosts: ['localhost'], allowPrivateNetworks: true })).toBe(
      false,
    );
  });

  it('parses exactly the IPv6 addresses node does, into the same eight groups', () => {
    const group = fc.integer({ min: 0, max: 0xffff });
    fc.assert(
      fc.property(
        fc.array(group, { minLength: 8, maxLength: 8 }),
        fc.integer({ min: 0, max: 7 }),
        (groups, cut) => {
          const full = groups.map((value) => value.toString(16)).join(':');
          expect(parseIpv6(full)).toEqual(groups);
          // Compress the zeros from `cut` on, when there are any.
          const zeros = groups.slice(cut).findIndex((value) => value !== 0);
          const compressed = `${groups
            .slice(0, cut)
            .map((v) => v.toString(16))
            .join(':')}::${groups
            .slice(zeros === -1 ? 8 : cut + zeros)
            .map((value) => value.toString(16))
            .join(':')}`;
          if (zeros !== 0 && isIP(compressed) === 6) expect(parseIpv6(compressed)).toEqual(groups);
        },
      ),
    );
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789abcdef:.'), maxLength: 24 }), (text) => {
        if (isIP(text) === 6) expect(parseIpv6(text)).toBeDefined();
        if (parseIpv6(text) !== undefined) expect(isIP(text)).toBe(6);
        if (isIP(text) === 4) expect(classifyAddress(text)).toBeDefined();
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('hostAllowed and addressAllowed', () => {
  it('matches allowHosts by name, case and trailing dot aside, by *. pattern, and by IP literal in any form', () => {
    const allowHosts = ['files.internal', '*.corp.example', '127.0.0.1', '::1'];
    for (const host of [
      'files.internal',
      'FILES.internal.',
      'a.corp.example',
      'b.a.corp.example',
      '127.0.0.1',
    ])
      expect(hostAllowed(host, allowHosts), host).toBe(true);
    for (const host of ['[::1]', '0:0::1', '[0:0:0:0:0:0:0:1]'])
      expect(hostAllowed(host, allowHosts), host).toBe(true);
    for (const host of [
      'corp.example',
      'xcorp.example',
      'files.internal.evil',
      'localhost',
      '127.0.0.2',
      '::2',
    ])
      expect(hostAllowed(host, allowHosts), host).toBe(false);
  });

  it('lets allowPrivateNetworks open only private, shared and unique-local addresses', () => {
    const open = { allowHosts: [], allowPrivateNetworks: true };
    const closed = { allowHosts: [], allowPrivateNetworks: false };
    for (const address of ['10.1.1.1', '192.168.1.1', '100.64.1.1', 'fd12::1']) {
      expect(addressAllowed(address, open), address).toBe(true);
      expect(addressAllowed(address, closed), address).toBe(false);
    }
    for (const address of ['127.0.0.1', '::1', '169.254.169.254', 'fe80::1', '224.0.0.1', '0.0.0.0', '::'])
      expect(addressAllowed(address, open), address).toBe(false);
    expect(addressAllowed('8.8.8.8', closed)).toBe(true);
  });
});
