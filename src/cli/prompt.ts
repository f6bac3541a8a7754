import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { usageError } from './exitCodes.ts';

// Questions at the terminal. A command that would ask but has no terminal (a script, CI) fails
// with a usage error naming the flag or variable to use instead: it never hangs on a prompt.

export function interactive(): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY);
}

/** Asks on stderr and returns the answer (or `fallback` when the answer is empty). */
export async function ask(question: string, options: { fallback?: string; otherwise: string }): Promise<string> {
  if (!interactive()) throw usageError(`no terminal to ask "${question}": ${options.otherwise}`);
  const readline = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const suffix = options.fallback ? ` (${options.fallback})` : '';
    const answer = (await readline.question(`${question}${suffix}: `)).trim();
    return answer || options.fallback || '';
  } finally {
    readline.close();
  }
}

/** Asks for a secret without echoing it. */
export async function askSecret(question: string, options: { otherwise: string }): Promise<string> {
  if (!interactive()) throw usageError(`no terminal to ask "${question}": ${options.otherwise}`);
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const readline = createInterface({ input: process.stdin, output, terminal: true });
  try {
    const answer = readline.question(`${question}: `);
    muted = true;
    return (await answer).trim();
  } finally {
    process.stderr.write('\n');
    readline.close();
  }
}

/** Yes or no at the terminal; `fallback` without a terminal or on an empty answer. */
export async function confirm(question: string, fallback: boolean): Promise<boolean> {
  if (!interactive()) return fallback;
  const answer = await ask(`${question} [${fallback ? 'Y/n' : 'y/N'}]`, { otherwise: '' });
  if (answer === '') return fallback;
  return /^y(es)?$/i.test(answer);
}

/** All of stdin, for --token-stdin and friends. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
