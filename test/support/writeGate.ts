import type { TestHooks } from '../../src/http/context.ts';

/**
 * Stops one route's authenticated write just before its transaction opens, so a test can act
 * (revoke the key, say) while that request is in flight, then let it go on.
 */
export function writeGate(route: string) {
  let armed = false;
  let reached!: () => void;
  let release!: () => void;
  const atWrite = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const hooks: TestHooks = {
    beforeAuthorizedWrite: async (at) => {
      if (!armed || at !== route) return;
      armed = false; // one request stops; later ones pass
      reached();
      await gate;
    },
  };
  return {
    hooks,
    /** The next write on the route (only that one) stops at the gate. */
    arm: () => {
      armed = true;
    },
    /** Resolves once a write is waiting at the gate. */
    atWrite,
    release: () => release(),
  };
}
