import type { Command } from 'commander';
import { CliError, EXIT, EXIT_CODES_HELP } from './exitCodes.ts';
import { Output } from './output.ts';

// The frame every client command shares: usage errors exit 2, `--json` on each command, and
// one place that turns a failure into its line on stderr and its exit code.

export interface CommonOptions {
  json?: boolean;
}

/** Usage errors of this command (and of the subcommands made from it later) exit 2; help exits 0. */
export function withUsageExit(command: Command): Command {
  return command.exitOverride((error) => process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.usage));
}

/** A command group such as `svc keys`: its subcommands are the commands. */
export function group(parent: Command, name: string, description: string): Command {
  return withUsageExit(parent.command(name).description(description));
}

/** A command that does something, with `--json`; give it its action with runs(). */
export function leaf(parent: Command, nameAndArgs: string, description: string): Command {
  return withUsageExit(parent.command(nameAndArgs).description(description))
    .option('--json', 'print JSON for scripts instead of text')
    .addHelpText('after', EXIT_CODES_HELP);
}

/**
 * Sets the command's action: `action` gets the Output, the parsed options and the arguments.
 * A failure is written to stderr and the process exits with its code; success exits 0.
 */
export function runs<Options extends CommonOptions>(
  command: Command,
  action: (out: Output, options: Options, ...args: string[]) => Promise<void>,
): Command {
  return command.action(async () => {
    const options = command.opts<Options>();
    const out = new Output(Boolean(options.json));
    try {
      await action(out, options, ...(command.processedArgs as string[]));
    } catch (error) {
      process.exit(report(out, error));
    }
    process.exit(process.exitCode ?? EXIT.ok);
  });
}

/** Writes the failure to stderr (a JSON object with --json) and returns its exit code. */
function report(out: Output, error: unknown): number {
  if (error instanceof CliError) {
    if (out.json) {
      out.note(JSON.stringify({ error: { message: error.message, exitCode: error.exitCode, problem: error.problem } }));
    } else {
      out.note(`svc: ${error.message}${error.details.length > 0 ? '\n' + error.details.join('\n') : ''}`);
    }
    return error.exitCode;
  }
  out.note(`svc: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return EXIT.failed;
}

/** Collects a repeatable option's values. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
