import type { AccountQuery, ProviderCredentials } from '../provider.ts';

/** A project's WhatsApp credentials: svc's neutral sender and secret, as the Cloud API names them. */
export interface WhatsAppCredentials {
  phoneNumberId: string;
  accessToken: string;
}

export type WhatsAppAccountQuery = Omit<AccountQuery, 'credentials'> & { credentials: WhatsAppCredentials };

export function whatsappCredentials(credentials: ProviderCredentials): WhatsAppCredentials {
  return { phoneNumberId: credentials.sender, accessToken: credentials.secret };
}
