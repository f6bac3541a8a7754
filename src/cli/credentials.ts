import type { Command } from 'commander';
import { signedIn } from './api.ts';
import { group, leaf, runs } from './command.ts';
import { usageError } from './exitCodes.ts';
import { askSecret, readStdin } from './prompt.ts';

// svc credentials set: the provider credentials and callback URL. The token never goes on the
// command line (shell history, ps): it is read from stdin or asked without echo.

interface SetOptions {
  json?: boolean;
  phoneNumberId?: string;
  businessAccountId?: string;
  tokenStdin?: boolean;
  callbackUrl?: string;
  removeCallbackUrl?: boolean;
}

export function registerCredentialCommands(program: Command): void {
  const credentials = group(program, 'credentials', 'the provider credentials and the callback URL');
  const set = leaf(credentials, 'set', 'save or rotate the provider credentials, and/or set the callback URL')
    .option('--phone-number-id <id>', 'the provider’s phone number id (the token is then read too)')
    .option('--token-stdin', 'read the provider access token from stdin (else asked without echo)')
    .option('--business-account-id <id>', 'the WhatsApp Business Account id (needed with system-user tokens)')
    .option('--callback-url <url>', 'https URL that receives status webhooks')
    .option('--remove-callback-url', 'stop sending webhooks to the callback URL');
  runs<SetOptions>(set, async (out, options) => {
    if (options.callbackUrl !== undefined && options.removeCallbackUrl) {
      throw usageError('give --callback-url or --remove-callback-url, not both');
    }
    if (options.tokenStdin && options.phoneNumberId === undefined) {
      throw usageError('--token-stdin goes with --phone-number-id: the two credentials are saved together');
    }
    const body: {
      providerPhoneNumberId?: string;
      providerAccessToken?: string;
      providerBusinessAccountId?: string;
      callbackUrl?: string | null;
    } = {};
    if (options.phoneNumberId !== undefined) {
      body.providerPhoneNumberId = options.phoneNumberId;
      body.providerAccessToken = options.tokenStdin
        ? (await readStdin()).trim()
        : await askSecret('Provider access token', { otherwise: 'pipe the token into --token-stdin' });
      if (!body.providerAccessToken) throw usageError('the provider access token is empty');
    }
    if (options.businessAccountId !== undefined) body.providerBusinessAccountId = options.businessAccountId;
    if (options.callbackUrl !== undefined) body.callbackUrl = options.callbackUrl;
    if (options.removeCallbackUrl) body.callbackUrl = null;
    if (Object.keys(body).length === 0) {
      throw usageError('nothing to set: give --phone-number-id (with the token), --business-account-id, --callback-url or --remove-callback-url');
    }
    const api = signedIn();
    const saved = await api.call(api.svc.PUT('/v1/projects/me/provider-credentials', { body }));
    out.result(saved, () =>
      [
        `Saved for project ${saved.projectId}.`,
        `  phone number id: ${saved.providerPhoneNumberId ?? '-'}`,
        `  callback URL:    ${saved.callbackUrl ?? '-'}`,
      ].join('\n'),
    );
  });
}
