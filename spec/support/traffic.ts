import { request } from 'node:http';
import type { Observable } from 'rxjs';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { eventually } from './eventually.ts';
import { Notifier } from './notifier.ts';

/** One GET through HAProxy: "status body", or the error's text (never throws, so polling can go on). */
export function httpGet(address: string, port: number, host: string, path = '/'): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: address, port, path, headers: { host }, agent: false, timeout: 2_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(`${res.statusCode} ${body.trim()}`));
    });
    req.on('error', (error) => resolve(String(error)));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/** Polls each HAProxy address until `host` is answered by exactly the backends on `ports` (examples/backends.ts). */
export async function servedBy(host: string, ports: readonly number[], addresses: readonly string[], httpPort: number, timeoutMs = 15_000): Promise<void> {
  const expected = new Set(ports.map((port) => `200 backend ${port} GET /`));
  for (const address of addresses) {
    const answers = async () => {
      const seen = new Set<string>();
      for (let i = 0; i < 2 * ports.length + 2; i++) seen.add(await httpGet(address, httpPort, host));
      return [...seen];
    };
    await eventually(answers, (seen) => seen.length === expected.size && seen.every((s) => expected.has(s)), `${address}: ${host} to be answered by ${ports.join(', ')}`, timeoutMs);
  }
}

export type Deployed = Extract<Outcome, { type: 'deployed' }>;

/** Every outcome of a running controller, in order, with waits on what has arrived since a mark. */
export class OutcomeLog {
  readonly entries: { readonly at: number; readonly outcome: Outcome }[] = [];
  readonly #changes = new Notifier();

  constructor(outcomes: Observable<Outcome>) {
    outcomes.subscribe((outcome) => {
      this.entries.push({ at: Date.now(), outcome });
      this.#changes.changed();
    });
  }

  mark(): number {
    return this.entries.length;
  }

  since(from: number): Outcome[] {
    return this.entries.slice(from).map((entry) => entry.outcome);
  }

  /** Resolves with the first outcome after `from` that `accept` takes; rejects listing what came instead. */
  waitFor<T extends Outcome>(from: number, accept: (outcome: Outcome) => outcome is T, what: string, timeoutMs = 30_000): Promise<T> {
    return this.#until(from, () => this.since(from).find(accept), `no ${what}`, timeoutMs);
  }

  /** Waits for a deployment of a change or a discovery (not a drift check) on every endpoint named, after `from`. */
  deployedOn(from: number, endpoints: readonly string[], timeoutMs = 30_000): Promise<Map<string, Deployed>> {
    const evaluate = () => {
      const found = new Map<string, Deployed>();
      for (const outcome of this.since(from)) {
        if (outcome.type === 'deployed' && outcome.reason !== 'drift' && endpoints.includes(outcome.endpoint) && !found.has(outcome.endpoint)) {
          found.set(outcome.endpoint, outcome);
        }
      }
      return found.size < endpoints.length ? undefined : found;
    };
    return this.#until(from, evaluate, 'not deployed everywhere', timeoutMs);
  }

  /**
   * Waits until every endpoint named has deployed the newest validated
   * configuration: traffic can show a configuration live a moment before
   * its deployment is reported, and a later mark must not catch that report.
   */
  settledOn(endpoints: readonly string[], timeoutMs = 30_000): Promise<true> {
    const evaluate = () => {
      const outcomes = this.since(0);
      const newest = outcomes.findLastIndex((outcome) => outcome.type === 'validated');
      const validated = outcomes[newest];
      if (validated?.type !== 'validated') return undefined;
      // Deployed before its verdict (runtimeFirst): passed on again after it, to write its files (or, caught up while the
      // first still waited, deployed whole then): settled once what was passed on after the verdict is deployed.
      const early = outcomes.some((outcome, i) => i < newest && outcome.type === 'runtimeFirst' && outcome.hash === validated.hash);
      const from = early ? outcomes.findIndex((outcome, i) => i > newest && outcome.type === 'deploying' && outcome.hash === validated.hash) : newest;
      if (from < 0) return undefined;
      const done = endpoints.every((endpoint) => outcomes.slice(from).some((o) => o.type === 'deployed' && o.endpoint === endpoint && o.hash === validated.hash));
      return done ? (true as const) : undefined;
    };
    return this.#until(0, evaluate, 'not settled', timeoutMs);
  }

  /** Re-evaluates on every outcome until `evaluate` finds something. */
  #until<T>(from: number, evaluate: () => T | undefined, failure: string, timeoutMs: number): Promise<T> {
    return this.#changes.until(evaluate, () => `${failure}; got ${this.since(from).map(describe).join(', ')}`, timeoutMs);
  }
}

function describe(outcome: Outcome): string {
  return `${outcome.type}${'endpoint' in outcome ? ` ${outcome.endpoint}` : ''}${'error' in outcome ? ` (${outcome.error.split('\n')[0]})` : ''}`;
}
