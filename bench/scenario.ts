// What a scenario is: named targets, each measured once per run (runs are interleaved), the
// figures they report, and the ratios between targets worth printing.
import type { DatabaseKind } from './databases.ts';
import type { TargetRuns } from './report.ts';

export interface BenchContext {
  /** The checkout of svc being measured. */
  svcDir: string;
  /** The harness's own folder (anchors, fake Graph API, receivers live here). */
  benchDir: string;
  quick: boolean;
  /** Pacing: the steady-state window, in seconds. */
  windowS: number;
  postgresUrl: string | undefined;
  databases: DatabaseKind[];
  log(message: string): void;
}

/** One measured run of a target: figure key → value; `notes` for what does not fit a number. */
export interface Measurement {
  figures: Record<string, number>;
  notes?: string[];
  /** Anything else worth keeping in the raw JSON (per number, per receiver…). */
  detail?: unknown;
}

export interface Target {
  name: string;
  run(context: BenchContext): Promise<Measurement>;
}

export interface Figure {
  key: string;
  label: string;
  digits: number;
}

export interface Ratio {
  /** e.g. "svc-sqlite / bare-fastify". */
  label: string;
  numerator: string;
  denominator: string;
  figure: string;
}

export interface Scenario {
  name: string;
  title: string;
  figures: Figure[];
  targets(context: BenchContext): Target[];
  ratios(context: BenchContext): Ratio[];
  /** Markdown printed after the scenario's tables (from the runs' details). */
  extraReport?(context: BenchContext, results: TargetRuns[]): string;
}
