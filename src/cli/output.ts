// How client commands speak: results on stdout (human text, or JSON with --json), progress and
// notes on stderr, so `svc … --json | jq` always reads clean JSON. Spinners and progress bars
// draw only on a terminal.

export interface OutputStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

export interface Spinner {
  update(text: string): void;
  /** Erases it until its next frame, so that a line can be printed in its place. */
  clear(): void;
  stop(): void;
}

export interface ProgressBar {
  /** Sets how many of the total are done. */
  set(done: number): void;
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export class Output {
  readonly json: boolean;
  private readonly streams: OutputStreams;

  constructor(json: boolean, streams: OutputStreams = { stdout: process.stdout, stderr: process.stderr }) {
    this.json = json;
    this.streams = streams;
  }

  /** The command's result: `data` as JSON with --json, else the human text. */
  result(data: unknown, human: () => string): void {
    this.streams.stdout.write(this.json ? JSON.stringify(data, null, 2) + '\n' : withNewline(human()));
  }

  /** One item of a stream of results (tail, listen): a JSON line with --json, else the human line. */
  item(data: unknown, human: () => string): void {
    this.streams.stdout.write(this.json ? JSON.stringify(data) + '\n' : withNewline(human()));
  }

  /** A line of the human output only (--json prints its result some other way). */
  line(text: string): void {
    if (!this.json) this.streams.stdout.write(withNewline(text));
  }

  /** A note for the person at the terminal (stderr, in both modes). */
  note(text: string): void {
    this.streams.stderr.write(withNewline(text));
  }

  spinner(text: string): Spinner {
    const stderr = this.streams.stderr;
    if (!stderr.isTTY) return { update() {}, clear() {}, stop() {} };
    let frame = 0;
    let current = text;
    const draw = () => stderr.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${current}`);
    draw();
    const timer = setInterval(draw, 80);
    return {
      update(next) {
        current = next;
      },
      clear() {
        stderr.write('\r\x1b[2K');
      },
      stop() {
        clearInterval(timer);
        stderr.write('\r\x1b[2K');
      },
    };
  }

  progress(total: number, label: string): ProgressBar {
    const stderr = this.streams.stderr;
    if (!stderr.isTTY) return { set() {}, stop() {} };
    const width = Math.max(10, Math.min(40, (stderr.columns ?? 80) - label.length - 30));
    const draw = (done: number) => {
      const filled = total === 0 ? width : Math.round((done / total) * width);
      const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
      stderr.write(`\r\x1b[2K${label} [${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${done}/${total} ${percent}%`);
    };
    draw(0);
    return {
      set: draw,
      stop() {
        stderr.write('\n');
      },
    };
  }
}

function withNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : text + '\n';
}

/** Rows as aligned columns under a header; empty cells show as "-"; no rows at all, as "(none)". */
export function table(header: readonly string[], rows: readonly (readonly (string | number | null | undefined)[])[]): string {
  if (rows.length === 0) return '(none)';
  const cells = [header, ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined || cell === '' ? '-' : String(cell))))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  return cells
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** An ISO time as a person reads it in a terminal: `2026-11-22 10:00:00`, or "-". */
export function shortTime(value: string | null | undefined): string {
  return value ? value.replace('T', ' ').replace(/\.\d{3}Z$/, '') : '-';
}
