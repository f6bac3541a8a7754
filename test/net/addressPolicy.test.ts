import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { describe, it } from 'node:test';
import {
  ForbiddenAddressError,
  forbiddenAddressReason,
  guardedLookup,
  resolveAllowedAddresses,
} from '../../src/net/addressPolicy.ts';

/** A resolver that answers from a table, so no test depends on the machine's DNS. */
function fakeLookup(table: Record<string, string[]>) {
  return (
    hostname: string,
    _options: { all: true },
    callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ) => {
    const found = table[hostname];
    if (!found) {
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      error.code = 'ENOTFOUND';
      callback(error, []);
      return;
    }
    callback(
      null,
      found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };
}

describe('address policy', () => {
  describe('forbiddenAddressReason', () => {
    const refused: [string, RegExp][] = [
      ['127.0.0.1', /loopback/],
      ['127.8.9.10', /loopback/],
      ['127.1', /127\.0\.0\.1 is a loopback/], // shorthand forms are no way around the rules
      ['0x7f.0.0.1', /loopback/],
      ['10.0.0.1', /private/],
      ['172.16.0.1', /private/],
      ['172.31.255.254', /private/],
      ['192.168.1.1', /private/],
      ['169.254.169.254', /link-local/],
      ['100.64.0.1', /carrier-grade NAT/],
      ['0.0.0.0', /unspecified/],
      ['224.0.0.1', /multicast/],
      ['240.0.0.1', /reserved/],
      ['255.255.255.255', /broadcast/],
      ['192.0.2.1', /reserved/],
      ['::1', /loopback/],
      ['::', /unspecified/],
      ['fe80::1', /link-local/],
      ['fc00::1', /unique local/],
      ['fd00:ec2::254', /unique local/], // AWS's IPv6 metadata endpoint
      ['ff02::1', /multicast/],
      ['::ffff:127.0.0.1', /127\.0\.0\.1 is a loopback/],
      ['::ffff:10.0.0.1', /10\.0\.0\.1 is a private/],
      ['::ffff:a9fe:a9fe', /169\.254\.169\.254 is a link-local/],
      ['64:ff9b::7f00:1', /special-purpose/], // NAT64 for 127.0.0.1
      ['2002:7f00:1::', /special-purpose/], // 6to4 for 127.0.0.1
      ['2001::1', /special-purpose/], // Teredo
      ['2001:db8::1', /reserved/],
      ['::7f00:1', /IPv4-compatible/], // ::127.0.0.1
      ['::a00:1', /IPv4-compatible/], // ::10.0.0.1
    ];
    for (const [address, reason] of refused) {
      it(`refuses ${address}`, () => {
        assert.match(forbiddenAddressReason(address) ?? 'allowed', reason);
      });
    }

    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '2001:4860:4860::8888']) {
      it(`allows ${address}`, () => {
        assert.equal(forbiddenAddressReason(address), undefined);
      });
    }

    it('refuses what is not an IP address', () => {
      for (const text of ['example.com', 'localhost', '', '127.0.0.1.5', '::1::', '[::1]']) {
        assert.equal(forbiddenAddressReason(text), 'not an IP address', text);
      }
    });
  });

  describe('resolveAllowedAddresses', () => {
    const lookup = fakeLookup({
      'public.test': ['93.184.216.34', '2606:4700::1111'],
      'loopback.test': ['127.0.0.1'],
      'mixed.test': ['93.184.216.34', '10.0.0.7'],
      'empty.test': [],
    });

    it('returns every address of a public name', async () => {
      const addresses = await resolveAllowedAddresses('public.test', false, lookup);
      assert.deepEqual(
        addresses.map((item) => item.address),
        ['93.184.216.34', '2606:4700::1111'],
      );
    });

    it('refuses a name that resolves to a loopback address', async () => {
      await assert.rejects(resolveAllowedAddresses('loopback.test', false, lookup), (error: Error) => {
        assert.ok(error instanceof ForbiddenAddressError);
        // The category, never the address a name resolves to inside our network.
        assert.equal(error.message, 'loopback.test resolves to a loopback address');
        return true;
      });
    });

    it('refuses a name with one public and one private address', async () => {
      await assert.rejects(resolveAllowedAddresses('mixed.test', false, lookup), ForbiddenAddressError);
    });

    it('judges literal addresses without asking DNS, brackets or not', async () => {
      const never = fakeLookup({});
      await assert.rejects(resolveAllowedAddresses('[::1]', false, never), ForbiddenAddressError);
      await assert.rejects(resolveAllowedAddresses('169.254.169.254', false, never), ForbiddenAddressError);
      const literal = await resolveAllowedAddresses('[2606:4700::1111]', false, never);
      assert.deepEqual(literal, [{ address: '2606:4700::1111', family: 6 }]);
    });

    it('lets development mode through, but not a name that does not resolve', async () => {
      const addresses = await resolveAllowedAddresses('loopback.test', true, lookup);
      assert.equal(addresses[0]!.address, '127.0.0.1');
      await assert.rejects(resolveAllowedAddresses('nowhere.test', true, lookup), { code: 'ENOTFOUND' });
      await assert.rejects(resolveAllowedAddresses('empty.test', false, lookup), /has no address/);
    });
  });

  describe('guardedLookup', () => {
    it('hands a connection only the addresses it checked', async () => {
      const lookup = guardedLookup(false);
      const refused = await new Promise<Error | null>((resolve) => {
        lookup('127.0.0.1', { all: true }, (error) => resolve(error));
      });
      assert.ok(refused instanceof ForbiddenAddressError);
      const allowed = await new Promise<unknown>((resolve, reject) => {
        lookup('93.184.216.34', {}, (error, address) => (error ? reject(error) : resolve(address)));
      });
      assert.equal(allowed, '93.184.216.34');
    });
  });
});
