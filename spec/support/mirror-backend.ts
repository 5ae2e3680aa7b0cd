import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A backend for RequestMirror end-to-end specs, on loopback: what it receives is what the mirror got. */

/** A copy of a request as a mirror got it. */
export interface Copy {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A mirror backend: keeps every copy; answers `status`, or holds every answer while `hold` is set (a mirror that never answers). */
export class Mirror {
  readonly copies: Copy[] = [];
  readonly held: ServerResponse[] = [];
  hold = false;
  status = 200;
  readonly server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      this.copies.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (this.hold) this.held.push(res);
      else res.writeHead(this.status).end('from the mirror');
    });
  });

  static async start(): Promise<Mirror> {
    const mirror = new Mirror();
    await new Promise<void>((resolve) => mirror.server.listen(0, '127.0.0.1', resolve));
    return mirror;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const res of this.held) res.end();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
