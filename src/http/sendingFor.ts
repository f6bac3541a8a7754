import { Sending } from '../sending/sendMessages.ts';
import type { HttpContext } from './context.ts';

// One send use case per running service, shared by the routes that send (single and batch), so
// they share one group commit and one set of idempotency keys in flight.
const sendings = new WeakMap<HttpContext, Sending>();

export function sendingFor(ctx: HttpContext): Sending {
  let sending = sendings.get(ctx);
  if (sending === undefined) {
    sending = new Sending(ctx.database, ctx.notifier, ctx.provider.parameterRule);
    sendings.set(ctx, sending);
  }
  return sending;
}
