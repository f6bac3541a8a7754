/**
 * The target of the `rel="next"` link of an RFC 8288 Link header, or undefined when there is
 * none (the last page).
 */
export function nextLink(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const link of header.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(link);
    if (!match) continue;
    const rels = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2]!);
    const rel = rels?.[1] ?? rels?.[2] ?? '';
    if (rel.toLowerCase().split(/\s+/).includes('next')) return match[1];
  }
  return undefined;
}

/** The query parameters of a next-page link, to send on the client's own base URL. */
export function queryOf(link: string): Record<string, string> {
  return Object.fromEntries(new URL(link, 'http://base.invalid').searchParams);
}
