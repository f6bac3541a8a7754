import type { MessageRow } from '../db/messages.ts';
import type { ProductPolicy } from '../domain/marketingMessages.ts';
import type { ProviderCredentials } from '../providers/provider.ts';

/** A message this worker has claimed and holds until its outcome is recorded. */
export interface HeldMessage {
  message: MessageRow;
  /** Undefined when the project has no credentials (yet): the send fails transiently. */
  credentials: ProviderCredentials | undefined;
  /** The lease this worker holds the row under (renewed while it is held). */
  leaseEnd: number;
  /** Sent through the Marketing Messages API with this product policy; absent: Cloud API. */
  productPolicy?: ProductPolicy;
}

/**
 * The claimed messages of one sending number that wait for their turn, and that number's pacing
 * state. Projects that share a number take turns (round robin), so none waits behind another's
 * backlog.
 */
export class SendLane {
  readonly phoneNumberId: string;
  /** Messages per second this number may send; Infinity for a lane that is not paced. */
  maxPerSecond: number;
  /** The start of the window the pacing state below belongs to. */
  window = 0;
  /** This window's budget is used up (here or by another process): wait for the next one. */
  exhausted = false;
  /** A reservation is on its way to the gate. */
  reserving = false;
  /** The last claim for this number took all it asked for: the database likely holds more. */
  backlogged = false;
  readonly #byProject = new Map<string, HeldMessage[]>();
  #size = 0;

  constructor(phoneNumberId: string, maxPerSecond: number) {
    this.phoneNumberId = phoneNumberId;
    this.maxPerSecond = maxPerSecond;
  }

  get size(): number {
    return this.#size;
  }

  push(held: HeldMessage): void {
    const queue = this.#byProject.get(held.message.project_id);
    if (queue) queue.push(held);
    else this.#byProject.set(held.message.project_id, [held]);
    this.#size++;
  }

  /** Up to `count` messages, one project at a time in turn. */
  take(count: number): HeldMessage[] {
    const taken: HeldMessage[] = [];
    while (taken.length < count && this.#size > 0) {
      for (const [projectId, queue] of this.#byProject) {
        if (taken.length >= count) break;
        taken.push(queue.shift()!);
        this.#size--;
        this.#byProject.delete(projectId);
        // Re-inserted at the end: the next take starts with the next project.
        if (queue.length > 0) this.#byProject.set(projectId, queue);
      }
    }
    return taken;
  }

  /** Everything waiting, emptying the lane. */
  takeAll(): HeldMessage[] {
    return this.take(this.#size);
  }

  /** Drops these messages (their lease was lost to another worker). */
  drop(ids: ReadonlySet<string>): void {
    for (const [projectId, queue] of this.#byProject) {
      const kept = queue.filter((held) => !ids.has(held.message.id));
      this.#size -= queue.length - kept.length;
      if (kept.length > 0) this.#byProject.set(projectId, kept);
      else this.#byProject.delete(projectId);
    }
  }
}
