// What `svc`'s client commands exit with, so scripts can branch on it (README "Use the CLI").

export const EXIT = {
  /** Done as asked. */
  ok: 0,
  /** The API refused the request (4xx/5xx other than 401), or svc could not be reached. */
  failed: 1,
  /** The command line is wrong: an unknown option, a missing value, an unreadable file. */
  usage: 2,
  /** No API key (run `svc login`), or the API answered 401 to it. */
  notSignedIn: 3,
  /** Done, but the outcome is not the one asked for: a followed message FAILED or was CANCELED,
   *  a waited-for template was REJECTED, rows of a CSV batch were rejected. */
  unfavourable: 4,
  /** --timeout ran out before the awaited outcome. */
  timedOut: 5,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODES_HELP = `
Exit codes (client commands):
  0    done as asked
  1    the API refused the request, or svc could not be reached
  2    usage error (options, files)
  3    not signed in, or the API key was refused (401)
  4    done, but unfavourable: a followed message FAILED or CANCELED, a template REJECTED,
       CSV rows rejected
  5    --timeout ran out
  130  interrupted`;

/** A failure the CLI explains in one line and exits with. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  /** Extra lines for a person (field errors, what to do next). */
  readonly details: readonly string[];
  /** For --json: the problem the API answered with, if any. */
  readonly problem: unknown;

  constructor(message: string, exitCode: ExitCode, options: { details?: readonly string[]; problem?: unknown } = {}) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.details = options.details ?? [];
    this.problem = options.problem;
  }
}

export function usageError(message: string): CliError {
  return new CliError(message, EXIT.usage);
}
