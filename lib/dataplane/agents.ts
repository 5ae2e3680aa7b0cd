/**
 * Where a request gets its connection pool. One keep-alive agent per client,
 * so consecutive calls to the same DPAPI reuse one TCP (and TLS) connection
 * instead of paying a handshake per call; a deployment makes many small calls.
 */
import { Agent } from 'node:http';

/** An agent borrowed for one request; `release` once its body has been read. */
export interface AgentLease {
  readonly agent: Agent;
  release(): void;
}

export interface AgentSource {
  acquire(): Promise<AgentLease>;
  /** Closes pooled connections; later acquisitions fail. */
  close(): void;
}

export class PlainAgentSource implements AgentSource {
  readonly #agent = new Agent({ keepAlive: true });
  #closed = false;

  acquire(): Promise<AgentLease> {
    if (this.#closed) return Promise.reject(new Error('the Data Plane API client is closed'));
    return Promise.resolve({ agent: this.#agent, release: () => {} });
  }

  close(): void {
    this.#closed = true;
    this.#agent.destroy();
  }
}
