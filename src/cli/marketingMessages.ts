import type { Command } from 'commander';
import { signedIn } from './api.ts';
import { group, leaf, runs } from './command.ts';
import { usageError } from './exitCodes.ts';

// svc marketing-messages get|set: whether MARKETING templates go through WhatsApp's Marketing
// Messages API (GET/PUT /v1/projects/me/marketing-messages). Each message says which API took it
// (its `route`, shown by `svc messages get`).

const MODES = {
  off: 'every template through Cloud API',
  fallback: 'MARKETING templates through the Marketing Messages API; Meta falls back to Cloud API when the business is not onboarded',
  strict: 'MARKETING templates through the Marketing Messages API only; Meta refuses (the message FAILS) when the business is not onboarded',
} as const;
type Mode = keyof typeof MODES;

const describe = (mode: string) => `Marketing Messages: ${mode} (${MODES[mode as Mode] ?? 'a mode this CLI does not know'}).`;

export function registerMarketingMessagesCommands(program: Command): void {
  const marketing = group(program, 'marketing-messages', 'route MARKETING templates through WhatsApp’s Marketing Messages API: off, fallback or strict');
  runs(leaf(marketing, 'get', 'the project’s setting'), async (out) => {
    const api = signedIn();
    const setting = await api.call(api.svc.GET('/v1/projects/me/marketing-messages'));
    out.result(setting, () => describe(setting.mode));
  });
  runs(leaf(marketing, 'set <mode>', `change it: ${Object.keys(MODES).join(', ')} (from the next dispatch)`), async (out, _options, mode) => {
    if (!Object.hasOwn(MODES, mode!)) throw usageError(`the mode is one of ${Object.keys(MODES).join(', ')}, not ${JSON.stringify(mode)}`);
    const api = signedIn();
    const setting = await api.call(api.svc.PUT('/v1/projects/me/marketing-messages', { body: { mode: mode as Mode } }));
    out.result(setting, () => `${describe(setting.mode)} Applies from the next dispatch.`);
  });
}
