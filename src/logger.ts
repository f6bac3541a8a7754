import pino, { type Logger } from 'pino';

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

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service: 'svc' } });
}
