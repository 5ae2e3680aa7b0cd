import { startObserver, type Observer } from '../../lib/telemetry/observer.ts';

/** An observer with no configuration or endpoints, on ports the kernel picks, its log lines (info and up) pushed to `lines`. */
export function startSpecObserver(lines: string[]): Promise<Observer> {
  return startObserver({
    health: { host: '127.0.0.1', port: 0 },
    metrics: { host: '127.0.0.1', port: 0 },
    log: { level: 'info', format: 'json', write: (line) => void lines.push(line) },
    config: () => undefined,
    endpoints: () => [],
  });
}
