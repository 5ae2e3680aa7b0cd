import {
  credentials,
  loadPackageDefinition,
  Metadata,
  Server,
  ServerCredentials,
  type Client,
  type ServiceClientConstructor,
  type ServiceError,
  type sendUnaryData,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { Buffer } from 'node:buffer';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A small gRPC API for end-to-end specs of GRPCRoute: two services of one
 * package, answered by real @grpc/grpc-js servers on loopback (plain
 * HTTP/2 with prior knowledge, as gRPC servers speak without TLS) and
 * called by its real client. Every answer names the backend that gave it,
 * the call's path as the server saw it and the request headers a spec
 * asks about, so a spec can tell where a call went and what reached it.
 */
const PROTO = `
syntax = "proto3";
package shop.v1;

service Cart {
  rpc Add (Item) returns (Answer);
  rpc Remove (Item) returns (Answer);
}

service Stock {
  rpc Get (Item) returns (Answer);
}

message Item { string name = 1; }

message Answer {
  string backend = 1;
  string path = 2;
  // Request header values by name, for the names in Item.name (comma separated).
  map<string, string> headers = 3;
}
`;

export interface Answer {
  readonly backend: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
}

type Unary = (request: { name: string }, metadata: Metadata, callback: (error: ServiceError | null, answer?: Answer) => void) => void;

interface ShopPackage {
  readonly shop: { readonly v1: { readonly Cart: ServiceClientConstructor; readonly Stock: ServiceClientConstructor } };
}

async function loadShop(): Promise<ShopPackage> {
  const dir = await mkdtemp(join(tmpdir(), 'grpc-shop-'));
  try {
    const file = join(dir, 'shop.proto');
    await writeFile(file, PROTO);
    return loadPackageDefinition(loadSync(file, { keepCase: true })) as unknown as ShopPackage;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A gRPC server answering every method of both services as `name`. */
export class ShopBackend {
  readonly name: string;
  readonly port: number;
  readonly #server: Server;

  private constructor(name: string, port: number, server: Server) {
    this.name = name;
    this.port = port;
    this.#server = server;
  }

  static async start(name: string): Promise<ShopBackend> {
    const shop = await loadShop();
    const server = new Server();
    const answer = (call: ServerUnaryCall<{ name: string }, Answer>, callback: sendUnaryData<Answer>) => {
      const headers: Record<string, string> = {};
      for (const header of call.request.name.split(',').filter(Boolean)) {
        const values = call.metadata.get(header);
        if (values.length > 0) headers[header] = values.map(String).join(',');
      }
      callback(null, { backend: name, path: call.getPath(), headers });
    };
    server.addService(shop.shop.v1.Cart.service, { Add: answer, Remove: answer });
    server.addService(shop.shop.v1.Stock.service, { Get: answer });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    return new ShopBackend(name, port, server);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.#server.tryShutdown(() => resolve()));
  }
}

/** The outcome of one call: the answer, or the gRPC status code of the error. */
export type CallResult = { readonly ok: true; readonly answer: Answer } | { readonly ok: false; readonly code: number; readonly details: string };

/**
 * A client of both services through `address` (HAProxy's plain HTTP
 * port), sending `authority` as :authority, which HAProxy reads as the
 * Host: cleartext HTTP/2 with prior knowledge, as grpc-js connects without
 * TLS. With `tlsCa`, over TLS to HAProxy's HTTPS port instead, `authority`
 * as SNI, the server's chain verified against that CA: grpc-js asks for h2
 * by ALPN and refuses a server that does not choose it.
 */
export class ShopClient {
  readonly #clients: Readonly<Record<'Cart' | 'Stock', Client>>;

  private constructor(clients: Readonly<Record<'Cart' | 'Stock', Client>>) {
    this.#clients = clients;
  }

  static async connect(address: string, authority: string, tlsCa?: string): Promise<ShopClient> {
    const shop = await loadShop();
    const options = { 'grpc.default_authority': authority, ...(tlsCa === undefined ? {} : { 'grpc.ssl_target_name_override': authority }) };
    // The spec CA's leaf names its host in the subject alone: the chain is what is checked.
    const channel = () => (tlsCa === undefined ? credentials.createInsecure() : credentials.createSsl(Buffer.from(tlsCa), null, null, { checkServerIdentity: () => undefined }));
    return new ShopClient({
      Cart: new shop.shop.v1.Cart(address, channel(), options),
      Stock: new shop.shop.v1.Stock(address, channel(), options),
    });
  }

  /** Calls `service`.`method`, sending `metadata` and asking for the request headers named in `echo`. */
  call(service: 'Cart' | 'Stock', method: string, metadata: Record<string, string> = {}, echo: readonly string[] = []): Promise<CallResult> {
    const sent = new Metadata();
    for (const [name, value] of Object.entries(metadata)) sent.set(name, value);
    const unary = (this.#clients[service] as unknown as Record<string, Unary>)[method]!.bind(this.#clients[service]);
    return new Promise((resolve) =>
      unary({ name: echo.join(',') }, sent, (error, answer) => resolve(error ? { ok: false, code: error.code, details: error.details } : { ok: true, answer: answer! })),
    );
  }

  close(): void {
    for (const client of Object.values(this.#clients)) client.close();
  }
}
