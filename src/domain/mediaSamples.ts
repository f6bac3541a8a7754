// What a media HEADER's sample may be (CONTRACT §9, the provider's limits): image jpeg/png up to
// 5 MB, video mp4 up to 16 MB, document pdf up to 100 MB. Pure: no I/O.

import type { MediaFormat } from '../providers/provider.ts';

export interface MediaLimit {
  types: readonly string[];
  maxBytes: number;
}

const MB = 1024 * 1024;

export const MEDIA_LIMITS: Readonly<Record<MediaFormat, MediaLimit>> = {
  IMAGE: { types: ['image/jpeg', 'image/png'], maxBytes: 5 * MB },
  VIDEO: { types: ['video/mp4'], maxBytes: 16 * MB },
  DOCUMENT: { types: ['application/pdf'], maxBytes: 100 * MB },
};

/** The media type a file's first bytes show, for a server that does not say (or says octet-stream). */
export function sniffedType(bytes: Uint8Array): string | undefined {
  const starts = (...values: number[]) => values.every((value, index) => bytes[index] === value);
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0x25, 0x50, 0x44, 0x46, 0x2d)) return 'application/pdf';
  if (bytes.length >= 8 && String.fromCharCode(...bytes.slice(4, 8)) === 'ftyp') return 'video/mp4';
  return undefined;
}

/** The sample's media type: the server's Content-Type when it names one, else what its bytes show. */
export function sampleType(contentType: string | undefined, bytes: Uint8Array): string | undefined {
  const declared = contentType?.split(';')[0]!.trim().toLowerCase();
  if (declared && declared !== 'application/octet-stream' && declared !== 'binary/octet-stream') {
    return declared === 'image/jpg' ? 'image/jpeg' : declared;
  }
  return sniffedType(bytes);
}

export function describeLimit(format: MediaFormat): string {
  const limit = MEDIA_LIMITS[format];
  const kinds = limit.types.map((type) => type.split('/')[1]).join(' or ');
  return `${format.toLowerCase()} ${kinds} of at most ${limit.maxBytes / MB} MB`;
}
