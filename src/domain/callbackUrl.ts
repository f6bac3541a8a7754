// The form a project's callback URL must have. Only its syntax is judged here; where its host
// points is judged with the network (src/net/addressPolicy.ts), at save time and at every delivery.

export const CALLBACK_URL_MAX_LENGTH = 2048;

export type CallbackUrlRule =
  | 'too_long'
  | 'invalid_url'
  | 'https_required'
  | 'userinfo_not_allowed'
  | 'fragment_not_allowed';

export type CallbackUrlCheck =
  | { ok: true; url: URL }
  | { ok: false; rule: CallbackUrlRule; message: string };

// The URL parser quietly trims and drops whitespace and control characters, and reads a
// backslash as a slash; a stored URL must mean the same to every parser, so they are refused.
const AMBIGUOUS = /[\s\p{Cc}\\]/u;
// The authority as written: an empty user-info (`https://@host/`) leaves no trace in the parsed
// URL, and neither `https:host` without slashes nor `https:///host` with an empty authority (which
// the URL parser quietly reads as https://host) is the absolute form a person means.
const AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/;

/**
 * Checks a callback (or webhook endpoint) URL's syntax, naming `field` in its messages: absolute, https (http too when `allowHttp`), no user-info,
 * no fragment, at most 2048 characters. The parsed URL is returned so the caller judges the host
 * the URL parser sees (`https://0x7f.1/` is 127.0.0.1), not the text.
 */
export function checkCallbackUrl(raw: string, options: { allowHttp: boolean; field?: string }): CallbackUrlCheck {
  const field = options.field ?? 'callbackUrl';
  const refuse = (rule: CallbackUrlRule, message: string): CallbackUrlCheck => ({ ok: false, rule, message });
  if (raw.length > CALLBACK_URL_MAX_LENGTH) {
    return refuse('too_long', `${field} must be at most ${CALLBACK_URL_MAX_LENGTH} characters.`);
  }
  const authority = AUTHORITY.exec(raw)?.[1];
  if (AMBIGUOUS.test(raw) || !authority || !URL.canParse(raw)) {
    return refuse('invalid_url', `${field} must be an absolute URL such as https://example.com/webhooks.`);
  }
  const url = new URL(raw);
  const schemes = options.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return refuse(
      'https_required',
      options.allowHttp ? `${field} must use https or http.` : `${field} must use https.`,
    );
  }
  if (url.hostname === '') {
    return refuse('invalid_url', `${field} must name a host.`);
  }
  if (url.username !== '' || url.password !== '' || authority.includes('@')) {
    return refuse('userinfo_not_allowed', `${field} must not carry a user name or password (user@host).`);
  }
  if (raw.includes('#')) {
    return refuse('fragment_not_allowed', `${field} must not have a #fragment: it is never sent to the receiver.`);
  }
  return { ok: true, url };
}
