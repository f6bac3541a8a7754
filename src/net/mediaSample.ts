import { describeLimit, MEDIA_LIMITS, sampleType } from '../domain/mediaSamples.ts';
import type { MediaFormat, MediaSample } from '../providers/provider.ts';
import { DownloadError, guardedDownload } from './guardedDownload.ts';

// A template's media sample fetched from the URL the customer gave (example.header_url), held to
// the provider's type and size limits. Registration fetches it (both providers: CONTRACT §9); the
// WhatsApp provider fetches it again only when it must upload it later (a submission retried).

/** The longest a sample's download may take. */
export const SAMPLE_TIMEOUT_MS = 20_000;

export async function loadMediaSample(url: string, format: MediaFormat, allowPrivate: boolean): Promise<MediaSample> {
  const limit = MEDIA_LIMITS[format];
  const downloaded = await guardedDownload(url, { allowPrivate, maxBytes: limit.maxBytes, timeoutMs: SAMPLE_TIMEOUT_MS });
  if (downloaded.bytes.length === 0) throw new DownloadError('empty', 'it answered an empty file');
  const type = sampleType(downloaded.contentType, downloaded.bytes);
  if (type === undefined || !limit.types.includes(type)) {
    throw new DownloadError('unsupported_type', `it is ${type ?? 'of an unknown type'}; a ${format} sample is ${describeLimit(format)}`);
  }
  return { url, contentType: type, bytes: downloaded.bytes };
}
