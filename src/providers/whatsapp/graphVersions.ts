// Meta's Graph API versions and the dates Meta retires them (developers.facebook.com/docs/graph-api/
// changelog/versions). A call to a retired version is answered by the oldest one still available,
// whose behaviour svc was never tested against: an operator should move before that day. Update
// this table when Meta announces a version or an expiry date.

export interface GraphVersion {
  version: string;
  /** YYYY-MM-DD. */
  released: string;
  /** YYYY-MM-DD, the first day it is no longer served; null while Meta names none. */
  expires: string | null;
}

export const GRAPH_VERSIONS: readonly GraphVersion[] = [
  { version: 'v26.0', released: '2026-07-29', expires: null },
  { version: 'v25.0', released: '2026-02-18', expires: '2028-07-29' },
  { version: 'v24.0', released: '2025-10-08', expires: '2028-02-18' },
  { version: 'v23.0', released: '2025-05-29', expires: '2027-10-08' },
  { version: 'v22.0', released: '2025-01-21', expires: '2027-05-20' },
  { version: 'v21.0', released: '2024-10-02', expires: '2027-01-21' },
  { version: 'v20.0', released: '2024-05-21', expires: '2026-09-24' },
  { version: 'v19.0', released: '2024-01-23', expires: '2026-05-21' },
  { version: 'v18.0', released: '2023-09-12', expires: '2026-01-26' },
];

/**
 * The newest version svc's WhatsApp adapter is tested against (the test fake serves it): v24.0
 * brought what the adapter relies on from late 2025 (portfolio messaging limits, 131059, status
 * webhooks without `conversation`, `message_status` per message).
 */
export const DEFAULT_GRAPH_VERSION = 'v24.0';

/** Warn this long before a configured version expires. */
export const EXPIRY_WARNING_DAYS = 90;

const DAY_MS = 24 * 3600_000;

/** `v24.0`: what SVC_WHATSAPP_API_VERSION must look like. */
export const GRAPH_VERSION_PATTERN = /^v\d{1,3}\.\d{1,2}$/;

/**
 * What an operator should hear at start about the configured version: expired, expiring within
 * EXPIRY_WARNING_DAYS, or unknown to this table; undefined when it is current.
 */
export function graphVersionWarning(version: string, now: number): string | undefined {
  const known = GRAPH_VERSIONS.find((entry) => entry.version === version);
  if (!known) {
    return (
      `SVC_WHATSAPP_API_VERSION ${version} is not in svc's table of Graph API versions; svc is tested against ` +
      `${DEFAULT_GRAPH_VERSION}.`
    );
  }
  if (known.expires === null) return undefined;
  const expiresAt = Date.parse(`${known.expires}T00:00:00Z`);
  if (now >= expiresAt) {
    return (
      `Graph API ${version} expired on ${known.expires}: Meta answers its calls with the oldest version still ` +
      `available. Set SVC_WHATSAPP_API_VERSION=${DEFAULT_GRAPH_VERSION} (what svc is tested against).`
    );
  }
  const daysLeft = Math.ceil((expiresAt - now) / DAY_MS);
  if (daysLeft > EXPIRY_WARNING_DAYS) return undefined;
  return (
    `Graph API ${version} expires on ${known.expires} (in ${daysLeft} day${daysLeft === 1 ? '' : 's'}): set ` +
    `SVC_WHATSAPP_API_VERSION=${DEFAULT_GRAPH_VERSION} (what svc is tested against) before then.`
  );
}
