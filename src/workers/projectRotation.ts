import type { QueuedProject } from '../db/claims.ts';

// Which projects a worker serves next, at a cost that does not grow with the number of tenants.
//
// A queue table (messages, webhook_deliveries) has a slice per project. Asking the database for
// every project with work on each turn costs two index seeks per project: at 10,000 backlogged
// tenants that was most of each turn, and a new tenant waited for a random draw to include it
// (41.6 s to its first SENT). Instead each worker keeps, in memory:
//
// - the rotation: projects known to have due work, served in turn (least recently served first:
//   those a sweep found and nobody served yet, then the others); a project served and still
//   backlogged goes to the back, one drained leaves it;
// - newcomers: projects that just got work (a commit's notification names them, or a scheduled
//   head fell due) and are not in the rotation: they are served before the rotation, once, then
//   join it — as deficit round-robin serves a newly active flow at once;
// - future heads: projects whose next row falls due later (scheduled sends, retries), with when.
//
// A turn also sweeps one page of the database's projects with work, after where the last sweep
// stopped, so what no notification announced (another process's release, a lease that ran out, a
// retry falling due, a backlog found at start) joins the back of the rotation within a few sweeps,
// and a turn costs at most one page, however many tenants there are. A worker whose turns come
// back to back (each answered webhook frees a slot) can sweep less often than it turns: with a
// minimum gap it sweeps when the gap has passed, or at once when it knows of nothing due.

export interface ProjectRotationOptions {
  /** Reads up to `limit` projects with queued rows, in project id order, after `after` ('' for the first). */
  sweep(after: string, limit: number): Promise<QueuedProject[]>;
  /** Projects read per sweep. */
  sweepPage: number;
  /**
   * The shortest time between two sweeps while the rotation knows of due projects (0: every turn).
   * Work nobody announced then waits up to this long per page of projects before it is found.
   */
  minSweepGapMs?: number;
}

export class ProjectRotation {
  readonly #sweep: ProjectRotationOptions['sweep'];
  readonly #sweepPage: number;
  readonly #minSweepGapMs: number;
  #sweptAt = Number.NEGATIVE_INFINITY;
  /** Map order is the rotation order: the front is served first, a re-set moves to the back. */
  readonly #rotation = new Map<string, true>();
  /** Found by a sweep, never served yet: ahead of the rotation's served projects. */
  readonly #unserved = new Map<string, true>();
  readonly #newcomers = new Map<string, true>();
  /** Project id → when its head falls due, for projects whose head is not due yet. */
  readonly #future = new Map<string, number>();
  #cursor = '';
  /** Announced while a sweep reads: its snapshot may predate their rows, so it must not forget them. */
  #announcedMeanwhile: Set<string> | undefined;

  constructor(options: ProjectRotationOptions) {
    this.#sweep = options.sweep;
    this.#sweepPage = options.sweepPage;
    this.#minSweepGapMs = options.minSweepGapMs ?? 0;
  }

  /** How many projects this worker knows to have due or future work. */
  get size(): number {
    return this.#rotation.size + this.#unserved.size + this.#newcomers.size + this.#future.size;
  }

  /** These projects just got work due now (a commit's notification). */
  announce(projectIds: Iterable<string>): void {
    for (const projectId of projectIds) {
      this.#announcedMeanwhile?.add(projectId);
      this.#future.delete(projectId);
      if (!this.#known(projectId)) this.#newcomers.set(projectId, true);
    }
  }

  /** Whether the project just got work and has not been served since (it goes first, here and in the lanes). */
  isNewcomer(projectId: string): boolean {
    return this.#newcomers.has(projectId);
  }

  /** Whether the project waits in the rotation already (served, or found and not yet served). */
  #known(projectId: string): boolean {
    return this.#rotation.has(projectId) || this.#unserved.has(projectId);
  }

  /**
   * Sweeps one page (when it is time to), then returns up to `limit` projects to serve now, in
   * order (newcomers, then the rotation), and when the earliest known future head falls due.
   */
  async next(now: number, limit: number): Promise<{ due: string[]; nextDueAt: number | undefined }> {
    if (now - this.#sweptAt >= this.#minSweepGapMs || !this.#knowsDue(now)) {
      this.#sweptAt = now;
      await this.#sweepPageOnce(now);
    }
    let nextDueAt: number | undefined;
    for (const [projectId, dueAt] of this.#future) {
      if (dueAt <= now) {
        this.#future.delete(projectId);
        if (!this.#known(projectId)) this.#newcomers.set(projectId, true);
      } else if (nextDueAt === undefined || dueAt < nextDueAt) {
        nextDueAt = dueAt;
      }
    }
    const due: string[] = [];
    for (const queue of [this.#newcomers, this.#unserved, this.#rotation]) {
      for (const projectId of queue.keys()) {
        if (due.length >= limit) break;
        due.push(projectId);
      }
    }
    return { due, nextDueAt };
  }

  /**
   * What serving a project gave: `backlogged` when it had more due rows than it was given (it
   * goes to the back of the rotation), else it is drained and leaves until announced or swept.
   */
  served(projectId: string, backlogged: boolean): void {
    this.#newcomers.delete(projectId);
    this.#unserved.delete(projectId);
    this.#rotation.delete(projectId);
    if (backlogged) this.#rotation.set(projectId, true);
  }

  #knowsDue(now: number): boolean {
    if (this.#newcomers.size > 0 || this.#unserved.size > 0 || this.#rotation.size > 0) return true;
    for (const dueAt of this.#future.values()) if (dueAt <= now) return true;
    return false;
  }

  async #sweepPageOnce(now: number): Promise<void> {
    const announced = new Set<string>();
    this.#announcedMeanwhile = announced;
    let page: QueuedProject[];
    try {
      page = await this.#sweep(this.#cursor, this.#sweepPage);
    } finally {
      this.#announcedMeanwhile = undefined;
    }
    const found = new Set<string>();
    for (const project of page) {
      found.add(project.projectId);
      if (project.nextDueAt <= now) {
        this.#future.delete(project.projectId);
        if (!this.#known(project.projectId) && !this.#newcomers.has(project.projectId)) this.#unserved.set(project.projectId, true);
      } else if (!this.#known(project.projectId) && !this.#newcomers.has(project.projectId)) {
        this.#future.set(project.projectId, project.nextDueAt);
      }
    }
    // Projects in the swept range that have no queued rows any more are forgotten.
    const from = this.#cursor;
    const to = page.length < this.#sweepPage ? undefined : page[page.length - 1]!.projectId;
    const inRange = (projectId: string) => projectId > from && (to === undefined || projectId <= to);
    for (const known of [this.#rotation, this.#unserved, this.#newcomers, this.#future]) {
      for (const projectId of known.keys()) {
        if (inRange(projectId) && !found.has(projectId) && !announced.has(projectId)) known.delete(projectId);
      }
    }
    this.#cursor = to ?? '';
  }
}
