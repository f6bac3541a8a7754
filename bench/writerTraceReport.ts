// Reads the trace files bench/writerTrace.ts wrote (`node bench/writerTraceReport.ts <dir>`) and
// prints, for each event-loop stall ≥ 50 ms, what ran on the main thread inside it: SQLite calls
// by kind (a commit that ran the automatic checkpoint, other commits, other statements), garbage
// collection, and the rest (JavaScript, JSON, I/O callbacks: not traced).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Entry {
  t: number;
  mono?: number;
  sqlMs?: number;
  sqlCalls?: number;
  ms: number;
  kind: string;
  db?: number;
  sql?: string;
  checkpoint?: boolean;
}

const dir = process.argv[2];
if (!dir) throw new Error('usage: node bench/writerTraceReport.ts <trace dir>');

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** svc run with `--cpu-prof --cpu-prof-dir=<dir>` too: the functions sampled inside a window (µs, monotonic). */
function profileOf(pid: string): ((from: number, to: number) => string) | undefined {
  const file = readdirSync(dir!).find((name) => name.endsWith('.cpuprofile') && name.includes(`.${pid}.`));
  if (!file) return undefined;
  const profile = JSON.parse(readFileSync(join(dir!, file), 'utf8')) as Profile;
  const names = new Map(
    profile.nodes.map((node) => [node.id, `${node.callFrame.functionName || '(anon)'} ${node.callFrame.url.split('/').slice(-2).join('/')}:${node.callFrame.lineNumber + 1}`]),
  );
  const times: number[] = [];
  let at = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((at += delta));
  return (from, to) => {
    const self = new Map<string, number>();
    for (let i = 0; i < profile.samples.length; i++) {
      if (times[i]! < from || times[i]! >= to) continue;
      const name = names.get(profile.samples[i]!)!;
      self.set(name, (self.get(name) ?? 0) + (times[i + 1] ?? times[i]!) - times[i]!);
    }
    return [...self]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([name, us]) => `${name} ${(us / 1000).toFixed(0)}`)
      .join('; ');
  };
}

for (const name of readdirSync(dir).filter((file) => file.startsWith('trace-'))) {
  const entries: Entry[] = readFileSync(join(dir, name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Entry);
  const stalls = entries.filter((entry) => entry.kind === 'stall' && entry.ms >= 50);
  const calls = entries.filter((entry) => entry.kind !== 'stall');
  if (stalls.length === 0) {
    console.log(`${name}: no stall ≥ 50 ms (${calls.length} traced calls)`);
    continue;
  }
  const checkpoints = calls.filter((entry) => entry.checkpoint);
  console.log(`${name}: ${stalls.length} stalls ≥ 50 ms; ${checkpoints.length} checkpoints in the whole trace (ms: ${checkpoints.map((entry) => entry.ms.toFixed(0)).join(', ')})`);
  const profile = profileOf(name.slice('trace-'.length));
  console.log('| stall at (s) | ms | all SQLite ms (calls) | checkpoint ms | other commits ms (n) | other SQL ≥ 0.5 ms (n, largest) | GC ms | not SQLite nor GC ms | top self time (profile, ms) |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  const first = entries[0]!.t;
  for (const stall of stalls) {
    const from = stall.t - 10; // the late tick was due 10 ms after the last one ran
    const to = stall.t + stall.ms;
    const inside = calls.filter((entry) => entry.t + entry.ms > from && entry.t < to);
    const overlap = (entry: Entry) => Math.min(entry.t + entry.ms, to) - Math.max(entry.t, from);
    const sum = (list: Entry[]) => list.reduce((total, entry) => total + overlap(entry), 0);
    const sqlCalls = inside.filter((entry) => entry.kind !== 'gc');
    const checkpoint = sqlCalls.filter((entry) => entry.checkpoint);
    const commits = sqlCalls.filter((entry) => !entry.checkpoint && /^\s*commit/i.test(entry.sql ?? ''));
    const other = sqlCalls.filter((entry) => !entry.checkpoint && !/^\s*commit/i.test(entry.sql ?? ''));
    const gc = inside.filter((entry) => entry.kind === 'gc');
    const largest = other.sort((a, b) => b.ms - a.ms)[0];
    const traced = (stall.sqlMs ?? sum(sqlCalls)) + sum(gc);
    const top = profile && stall.mono ? profile(stall.mono - (stall.ms + 10) * 1000, stall.mono) : '';
    console.log(
      `| ${((stall.t - first) / 1000).toFixed(1)} | ${stall.ms} | ${stall.sqlMs?.toFixed(0)} (${stall.sqlCalls}) | ${sum(checkpoint).toFixed(0)} | ${sum(commits).toFixed(0)} (${commits.length}) | ` +
        `${sum(other).toFixed(0)} (${other.length}${largest ? `, ${largest.ms.toFixed(0)} ms ${largest.kind} ${JSON.stringify(largest.sql)}` : ''}) | ${sum(gc).toFixed(0)} | ${Math.max(0, stall.ms + 10 - traced).toFixed(0)} | ${top} |`,
    );
  }
}
