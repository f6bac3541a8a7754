import pino, { type DestinationStream, type Logger } from 'pino';

// Secrets never reach a log line, wherever a careless call might put them.
const REDACT = [
  'req.headers.authorization',
  'headers.authorization',
  '*.authorization',
  '*.apiKey',
  '*.key',
  '*.providerAccessToken',
  '*.accessToken',
  '*.token',
  '*.secret',
  '*.webhookSecret',
  '*.password',
];

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const COLOURS: Record<number, string> = { 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[31m' };
const OMIT = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'service']);

/** One JSON log line as a person reads it: time, level, message, then the other fields. */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const level = Number(entry.level);
  const time = new Date(Number(entry.time)).toISOString().slice(11, 23);
  const fields = Object.entries(entry)
    .filter(([name]) => !OMIT.has(name))
    .map(([name, value]) => {
      if (name === 'err' && value && typeof value === 'object') {
        const err = value as { message?: string; stack?: string };
        return `\n    ${err.stack ?? err.message}`;
      }
      return `${name}=${typeof value === 'string' ? value : JSON.stringify(value)}`;
    });
  const colour = COLOURS[level] ?? '';
  return `${time} ${colour}${LEVELS[level] ?? level}${colour ? '\x1b[0m' : ''} ${String(entry.msg ?? '')} ${fields.join(' ')}`.trimEnd() + '\n';
}

function prettyStream(): DestinationStream {
  return { write: (line: string) => void process.stdout.write(prettyLine(line)) };
}

/** The service's logger: JSON lines on stdout (or `destination`), or lines for a person on a terminal. */
export function createLogger(level: string, format: 'json' | 'pretty' = 'json', destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service: 'svc' } };
  if (destination) return pino(options, destination);
  return format === 'pretty' ? pino(options, prettyStream()) : pino(options);
}
