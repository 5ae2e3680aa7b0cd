import { Observable, type OperatorFunction } from 'rxjs';
import type { DeployReason, Endpoint, FleetCommand, FleetInput, Validated } from '../lib/pipeline/model.ts';

function deploy(endpoint: Endpoint, config: Validated, reason: DeployReason): FleetCommand {
  return { type: 'deploy', request: { endpoint, config, reason } };
}

/**
 * Turns the newest config and whole endpoint-set snapshots into per-endpoint
 * commands. A new endpoint gets the current config at once: waiting for the
 * next resource change could leave a fresh HAProxy serving nothing for as
 * long as the cluster stays quiet.
 */
export function discovery(): OperatorFunction<FleetInput, FleetCommand> {
  return (source) =>
    new Observable<FleetCommand>((subscriber) => {
      // Per subscription: a second subscriber must discover every endpoint afresh.
      let config: Validated | undefined;
      let endpoints = new Map<string, Endpoint>();

      return source.subscribe({
        next: (input) => {
          if (input.type === 'config') {
            config = input.config;
            for (const endpoint of endpoints.values()) subscriber.next(deploy(endpoint, config, 'change'));
            return;
          }
          const previous = endpoints;
          // Map construction keeps the last entry for a repeated id.
          endpoints = new Map(input.endpoints.map((endpoint) => [endpoint.id, endpoint]));
          for (const id of previous.keys()) {
            if (!endpoints.has(id)) subscriber.next({ type: 'remove', endpointId: id });
          }
          for (const endpoint of endpoints.values()) {
            const known = previous.get(endpoint.id);
            if (known?.url === endpoint.url) continue;
            // A new url is a new HAProxy instance: the old one's synchroniser
            // must finish before one for the new instance starts.
            if (known) subscriber.next({ type: 'remove', endpointId: endpoint.id });
            if (config) subscriber.next(deploy(endpoint, config, 'discovered'));
          }
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    });
}
