import { BSUID_AUTHENTICATION_HINT } from '../../domain/messageRequest.ts';
import type { ProviderError } from '../provider.ts';

// The sandbox's magic recipients (CONTRACT §7): numbers that make it misbehave on purpose.
export const MAGIC = {
  /** SENT, then FAILED with 131026 (undeliverable). */
  undeliverable: '+15550000001',
  /** Every submission fails transiently, so retries run out and the message FAILS. */
  alwaysTransient: '+15550000002',
  /** DELIVERED but never READ. */
  neverRead: '+15550000003',
  /** The first two submissions fail transiently, the third goes through. */
  flakyTwice: '+15550000004',
} as const;

// Error codes and titles as the WhatsApp Cloud API reports them.
export const UNDELIVERABLE: ProviderError = {
  code: '131026',
  title: 'Message undeliverable',
  message: 'Unable to deliver message. The recipient may not be on WhatsApp or may have blocked the business.',
};

export const TEMPORARILY_UNAVAILABLE: ProviderError = {
  code: '131000',
  title: 'Something went wrong',
  message: 'Message failed to send because of an unknown error. Try again later.',
};

export const AUTHENTICATION_TO_BSUID: ProviderError = {
  code: '131062',
  title: 'Business-scoped user id not supported',
  message: `You can only send authentication messages to recipients' phone numbers, not their business-scoped user IDs. ${BSUID_AUTHENTICATION_HINT}`,
};
