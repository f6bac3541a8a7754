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

export function decoratePublicUrl(app: FastifyInstance, config: Pick<Config, 'host' | 'publicUrl'>): void {
  app.decorate('publicUrl', () => {
    if (config.publicUrl !== undefined) return config.publicUrl;
    const { port } = app.server.address() as AddressInfo;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    return `http://${host}:${port}`;
  });
}
