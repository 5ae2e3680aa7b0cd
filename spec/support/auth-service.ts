import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An oauth2-proxy-like auth service for the external-auth e2e, answering as
 * oauth2-proxy's auth endpoint does (oauth2-proxy/oauth2-proxy
 * oauthproxy.go, AuthOnly): 202 Accepted with the user in
 * X-Auth-Request-User and -Email (its --set-xauthrequest) for a request
 * carrying a valid session cookie, 401 Unauthorized for one without; it
 * never sees the request's body. Other paths stand for other services:
 * /forbidden answers 403, /broken 502, /slow never answers until stopped.
 * Started with `success: 200` it answers a valid session 200 instead, as
 * Gateway API's ExternalAuth filter asks of an HTTP auth service
 * (apis/v1/httproute_types.go HTTPExternalAuthFilter: any other code is a
 * failure); oauth2-proxy's 202 would be one.
 */

export const SESSION_COOKIE = '_oauth2_proxy';
export const VALID_SESSION = 'alice-session';

/** What the auth service saw of one auth request. */
export interface AuthRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly bodyLength: number;
}

export class AuthService {
  readonly requests: AuthRequest[] = [];
  readonly #server: Server;
  readonly #held: ServerResponse[] = [];

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(options: { readonly success?: number } = {}): Promise<AuthService> {
    const server = createServer();
    const service = new AuthService(server);
    server.on('request', (req, res) => {
      let bodyLength = 0;
      req.on('data', (chunk: Buffer) => (bodyLength += chunk.length));
      req.on('end', () => {
        service.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, bodyLength });
        const path = req.url ?? '';
        if (path.startsWith('/slow')) return void service.#held.push(res);
        if (path.startsWith('/forbidden')) return void res.writeHead(403).end();
        if (path.startsWith('/broken')) return void res.writeHead(502).end();
        const session = /(?:^|;\s*)_oauth2_proxy=([^;]*)/.exec(req.headers.cookie ?? '')?.[1];
        if (session !== VALID_SESSION) return void res.writeHead(401, { 'www-authenticate': 'Bearer realm="stand-in"' }).end();
        res
          .writeHead(options.success ?? 202, {
            'x-auth-request-user': 'alice',
            'x-auth-request-email': 'alice@example.com',
            'set-cookie': `${SESSION_COOKIE}=${VALID_SESSION}; Path=/; HttpOnly`,
          })
          .end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return service;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** The requests seen since `from` (a length of `requests` taken earlier). */
  since(from: number): readonly AuthRequest[] {
    return this.requests.slice(from);
  }

  stop(): Promise<void> {
    for (const res of this.#held.splice(0)) res.destroy();
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
