import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The base of every absolute link the API gives out: SVC_PUBLIC_URL, else http://HOST:PORT
     * with the port actually listened on. Never the request's Host or X-Forwarded-* headers,
     * which the client chooses.
     */
    publicUrl(): string;
  }
}

export function decoratePublicUrl(app: FastifyInstance, config: Pick<Config, 'host' | 'port' | 'publicUrl'>): void {
  app.decorate('publicUrl', () => {
    if (config.publicUrl !== undefined) return config.publicUrl;
    // Not listening (app.inject): the configured port is the best there is.
    const port = (app.server.address() as AddressInfo | null)?.port ?? config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    return `http://${host}:${port}`;
  });
}
