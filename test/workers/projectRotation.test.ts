import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { QueuedProject } from '../../src/db/claims.ts';
import { ProjectRotation } from '../../src/workers/projectRotation.ts';

// The rotation against an in-memory stand-in for the database's projects with queued rows.

function database(projects: Map<string, number>) {
  const sweeps: { after: string; limit: number }[] = [];
  return {
    sweeps,
    sweep: async (after: string, limit: number): Promise<QueuedProject[]> => {
      sweeps.push({ after, limit });
      return [...projects.entries()]
        .filter(([projectId]) => projectId > after)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .slice(0, limit)
        .map(([projectId, nextDueAt]) => ({ projectId, nextDueAt }));
    },
  };
}

const id = (n: number) => `proj_${String(n).padStart(5, '0')}`;

describe('project rotation', () => {
  it('reads one page of projects per turn, never all of them', async () => {
    const queued = new Map<string, number>(Array.from({ length: 10_000 }, (_, n) => [id(n), 0] as const));
    const db = database(queued);
    const rotation = new ProjectRotation({ sweep: db.sweep, sweepPage: 500 });
    await rotation.next(1000, 100);
    await rotation.next(1000, 100);
    assert.deepEqual(db.sweeps, [
      { after: '', limit: 500 },
      { after: id(499), limit: 500 },
    ]);
  });

  it('serves a project that just got work before 10,000 backlogged ones, then puts it in the rotation', async () => {
    const queued = new Map<string, number>(Array.from({ length: 10_000 }, (_, n) => [id(n), 0] as const));
    const db = database(queued);
    const rotation = new ProjectRotation({ sweep: db.sweep, sweepPage: 500 });
    // Some turns of serving the backlog, each project staying backlogged.
    for (let turn = 0; turn < 5; turn++) {
      const { due } = await rotation.next(1000, 100);
      for (const projectId of due) rotation.served(projectId, true);
    }
    queued.set('proj_new', 1000);
    rotation.announce(['proj_new']);
    const { due } = await rotation.next(1000, 100);
    assert.equal(due[0], 'proj_new');
    rotation.served('proj_new', true);
    const after = await rotation.next(1000, 100);
    assert.notEqual(after.due[0], 'proj_new', 'once served, it waits its turn like the others');
  });

  it('serves the least recently served first: every backlogged project gets its turn', async () => {
    const queued = new Map<string, number>(Array.from({ length: 30 }, (_, n) => [id(n), 0] as const));
    const db = database(queued);
    const rotation = new ProjectRotation({ sweep: db.sweep, sweepPage: 500 });
    const served = new Map<string, number>();
    for (let turn = 0; turn < 9; turn++) {
      const { due } = await rotation.next(1000, 10);
      assert.equal(due.length, 10);
      for (const projectId of due) {
        served.set(projectId, (served.get(projectId) ?? 0) + 1);
        rotation.served(projectId, true);
      }
    }
    assert.equal(served.size, 30);
    assert.deepEqual(new Set(served.values()), new Set([3]), 'each served equally often');
  });

  it('forgets drained projects, and finds work nobody announced on a later sweep', async () => {
    const queued = new Map([[id(1), 0], [id(2), 0]]);
    const db = database(queued);
    const rotation = new ProjectRotation({ sweep: db.sweep, sweepPage: 500 });
    assert.deepEqual((await rotation.next(1000, 10)).due, [id(1), id(2)]);
    rotation.served(id(1), false);
    rotation.served(id(2), true);
    queued.delete(id(1));
    assert.deepEqual((await rotation.next(1000, 10)).due, [id(2)]);
    queued.set(id(3), 500); // committed by another process, no notification here
    assert.deepEqual((await rotation.next(1000, 10)).due, [id(3), id(2)], 'found by the sweep, never served: before those served');
  });

  it('remembers future heads and says when the earliest falls due; serves it then', async () => {
    const queued = new Map([[id(1), 5000], [id(2), 3000]]);
    const db = database(queued);
    const rotation = new ProjectRotation({ sweep: db.sweep, sweepPage: 1 });
    assert.deepEqual(await rotation.next(1000, 10), { due: [], nextDueAt: 5000 });
    assert.deepEqual(await rotation.next(1000, 10), { due: [], nextDueAt: 3000 });
    const later = await rotation.next(3000, 10);
    assert.deepEqual(later.due, [id(2)]);
  });

  it('with a minimum gap, sweeps at most once per gap while it knows of due projects', async () => {
    const queued = new Map<string, number>(Array.from({ length: 3_000 }, (_, n) => [id(n), 0] as const));
    const db = database(queued);
    const rotation = new ProjectRotation({ sweep: db.sweep, sweepPage: 500, minSweepGapMs: 200 });
    for (const now of [1000, 1050, 1199]) {
      const { due } = await rotation.next(now, 100);
      assert.equal(due.length, 100);
      for (const projectId of due) rotation.served(projectId, true);
    }
    assert.deepEqual(db.sweeps, [{ after: '', limit: 500 }], 'one sweep in the first 200 ms');
    await rotation.next(1200, 100);
    assert.deepEqual(db.sweeps.at(-1), { after: id(499), limit: 500 }, 'the next page once the gap has passed');
    assert.equal(db.sweeps.length, 2);
  });

  it('with a minimum gap, still sweeps at once when it knows of nothing due', async () => {
    const queued = new Map([[id(1), 0]]);
    const db = database(queued);
    const rotation = new ProjectRotation({ sweep: db.sweep, sweepPage: 500, minSweepGapMs: 200 });
    assert.deepEqual((await rotation.next(1000, 10)).due, [id(1)]);
    rotation.served(id(1), false);
    queued.delete(id(1));
    queued.set(id(2), 1000); // committed by another process, no notification here
    assert.deepEqual((await rotation.next(1001, 10)).due, [id(2)], 'nothing known: the sweep runs within the gap');
    rotation.served(id(2), true);
    queued.set(id(3), 2000); // a retry falling due later, unannounced
    queued.set(id(4), 1000);
    assert.deepEqual((await rotation.next(1002, 10)).due, [id(2)], 'a due project is known: no sweep yet');
    assert.equal(db.sweeps.length, 2);
    assert.deepEqual((await rotation.next(1201, 10)).due, [id(4), id(2)], 'found by the sweep once the gap has passed');
    assert.equal((await rotation.next(1202, 10)).nextDueAt, 2000, 'and the future head with it');
  });

  it('does not forget a project announced while a sweep was reading', async () => {
    const rotation: ProjectRotation = new ProjectRotation({
      sweep: async () => {
        rotation.announce(['proj_late']);
        return []; // the sweep's snapshot predates the new project's commit
      },
      sweepPage: 500,
    });
    assert.deepEqual((await rotation.next(1000, 10)).due, ['proj_late']);
  });
});
