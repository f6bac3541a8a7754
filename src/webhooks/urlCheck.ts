import type { LookupAddress } from 'node:dns';
import { checkCallbackUrl } from '../domain/callbackUrl.ts';
import type { FieldError } from '../domain/fieldError.ts';
import { forbiddenAddressKind, forbiddenAddressReason, isLiteralAddress, resolveAll } from '../net/addressPolicy.ts';

// Whether a callback or webhook endpoint URL may be saved (CONTRACT §6): the callback URL's syntax rules, and
// a host that is not, and does not resolve to, a forbidden address. Every delivery checks the
// address again as it connects (webhooks/deliver.ts), so DNS rebinding gains nothing.

// A slow or dead resolver must not hold the request open: a host that does not answer in time is
// accepted, and is resolved and checked again at every delivery.
const DNS_TIMEOUT_MS = 2000;

async function resolveWithin(host: string, ms: number): Promise<LookupAddress[] | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([resolveAll(host).catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why this URL is refused (as the field error of `pointer`, e.g. `/url`), or undefined when it may
 * be saved. In development mode (allowPrivate) http and every address are allowed, and DNS is not
 * asked at all.
 */
export async function webhookUrlError(raw: string, allowPrivate: boolean, pointer: string): Promise<FieldError | undefined> {
  const field = pointer.slice(1);
  const checked = checkCallbackUrl(raw, { allowHttp: allowPrivate, field });
  if (!checked.ok) return { field: pointer, code: checked.rule, message: checked.message };
  if (allowPrivate) return undefined;
  const host = checked.url.hostname;
  const addresses = (await resolveWithin(host, DNS_TIMEOUT_MS)) ?? [];
  const literal = isLiteralAddress(host);
  for (const { address } of addresses) {
    const kind = forbiddenAddressKind(address);
    if (kind === undefined) continue;
    return {
      field: pointer,
      code: 'forbidden_address',
      // A name's address is not repeated: what it resolves to inside our network is ours.
      message: literal
        ? `${field} must point to a public address, and ${forbiddenAddressReason(address)}.`
        : `${field} must point to a public address, and ${host} resolves to ${kind}.`,
    };
  }
  return undefined;
}
