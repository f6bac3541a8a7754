// Markdown tables from the runs: per target, the median and min–max of each figure; then the
// ratios between targets, computed run by run (the runs are interleaved) and summarised the same way.
import type { Measurement, Ratio, Scenario } from './scenario.ts';

export interface TargetRuns {
  target: string;
  /** One entry per run; undefined where that run failed. */
  runs: (Measurement | undefined)[];
  errors: string[];
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function format(value: number, digits: number): string {
  if (!Number.isFinite(value)) return String(value);
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** "median (min–max)", or the value alone for a single run. */
export function summary(all: number[], digits: number): string {
  // NaN stands for "nothing to measure" (no delivery received, say).
  const values = all.filter((value) => Number.isFinite(value));
  if (values.length === 0) return '–';
  const mid = format(median(values), digits);
  if (values.length === 1) return mid;
  return `${mid} (${format(Math.min(...values), digits)}–${format(Math.max(...values), digits)})`;
}

export function scenarioReport(scenario: Scenario, results: TargetRuns[], ratios: Ratio[]): string {
  const lines: string[] = [`### ${scenario.title}`, ''];
  const shown = scenario.figures.filter((figure) =>
    results.some((target) => target.runs.some((run) => run?.figures[figure.key] !== undefined)),
  );
  lines.push(`| target | runs | ${shown.map((figure) => figure.label).join(' | ')} |`);
  lines.push(`|---|---|${shown.map(() => '---').join('|')}|`);
  for (const target of results) {
    const ok = target.runs.filter((run): run is Measurement => run !== undefined);
    const cells = shown.map((figure) =>
      summary(
        ok.map((run) => run.figures[figure.key]).filter((value): value is number => value !== undefined),
        figure.digits,
      ),
    );
    lines.push(`| ${target.target} | ${ok.length}/${target.runs.length} | ${cells.join(' | ')} |`);
  }
  const byName = new Map(results.map((target) => [target.target, target]));
  const ratioLines: string[] = [];
  for (const ratio of ratios) {
    const top = byName.get(ratio.numerator);
    const bottom = byName.get(ratio.denominator);
    if (!top || !bottom) continue;
    const perRun: number[] = [];
    for (let i = 0; i < top.runs.length; i++) {
      const a = top.runs[i]?.figures[ratio.figure];
      const b = bottom.runs[i]?.figures[ratio.figure];
      if (a !== undefined && b !== undefined && b !== 0) perRun.push(a / b);
    }
    const label = scenario.figures.find((figure) => figure.key === ratio.figure)?.label ?? ratio.figure;
    if (perRun.length > 0) ratioLines.push(`| ${ratio.label} | ${label} | ${summary(perRun, 2)} |`);
  }
  if (ratioLines.length > 0) {
    lines.push('', '| ratio | figure | median (min–max) over runs |', '|---|---|---|', ...ratioLines);
  }
  const notes = results.flatMap((target) => [
    ...target.errors.map((error) => `- ${target.target}: FAILED: ${error.split('\n')[0]}`),
    ...[...new Set(target.runs.flatMap((run) => run?.notes ?? []))].map((note) => `- ${target.target}: ${note}`),
  ]);
  if (notes.length > 0) lines.push('', ...notes);
  return lines.join('\n');
}
