import type { Command } from 'commander';
import { registerAnalyticsCommands } from './analytics.ts';
import { registerAuthCommands } from './auth.ts';
import { registerCredentialCommands } from './credentials.ts';
import { EXIT_CODES_HELP } from './exitCodes.ts';
import { registerKeyCommands } from './keys.ts';
import { registerMarketingMessagesCommands } from './marketingMessages.ts';
import { registerDeliveryCommands } from './deliveries.ts';
import { registerMessageCommands } from './messages.ts';
import { registerProjectCommands } from './projects.ts';
import { registerSendCommand } from './send.ts';
import { registerTemplateCommands } from './templates.ts';
import { registerWebhookEndpointCommands } from './webhookEndpoints.ts';
import { registerWebhookCommands } from './webhooks.ts';
import { registerBatchCommands, registerCredentialsShow, registerSecretCommands, registerSuppressionCommands, registerTemplateDelete } from './more.ts';

// svc's client commands: a user's view of svc through its public API (via @svc/sdk), beside the
// service's own commands (serve, migrate, projects disable|enable) in main.ts.

export function registerClientCommands(program: Command, projects: Command): void {
  registerAuthCommands(program);
  registerProjectCommands(projects);
  registerKeyCommands(program);
  registerCredentialCommands(program);
  registerTemplateCommands(program);
  registerSendCommand(program);
  registerMessageCommands(program);
  registerWebhookCommands(program);
  registerDeliveryCommands(program);
  registerBatchCommands(program);
  registerSuppressionCommands(program);
  registerAnalyticsCommands(program);
  registerMarketingMessagesCommands(program);
  registerWebhookEndpointCommands(program.commands.find((command) => command.name() === 'webhooks')!);
  registerSecretCommands(program.commands.find((command) => command.name() === 'webhooks')!);
  registerTemplateDelete(program.commands.find((command) => command.name() === 'templates')!);
  registerCredentialsShow(program.commands.find((command) => command.name() === 'credentials')!);
  program.addHelpText(
    'after',
    `
Client commands talk to a running svc through its public API: sign in with \`svc login\`
(or set SVC_API_KEY and SVC_BASE_URL). Every command has --help; most take --json.
${EXIT_CODES_HELP}`,
  );
}
