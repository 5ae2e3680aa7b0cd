import { Observable, type OperatorFunction } from 'rxjs';
import type { DeployReason, Endpoint, FleetCommand, FleetInput, Validated } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import { forwardingTo } from './operators/contained.ts';

export interface DiscoveryOptions {
  readonly report: Report;
}

function deploy(endpoint: Endpoint, config: Validated, reason: DeployReason): FleetCommand {
  return { type: 'deploy', request: { endpoint, config, reason } };
}

/**
 * Turns the newest config and whole endpoint-set snapshots into per-endpoint
 * commands. A new endpoint gets the current config at once: waiting for the
 * next resource change could leave a fresh HAProxy serving nothing for as
 * long as the cluster stays quiet. Each fan-out is reported with the
 * endpoints it reached, so a reconciliation knows which deployments it waits for.
 */
export function discovery({ report }: DiscoveryOptions): OperatorFunction<FleetInput, FleetCommand> {
  return (source) =>
    new Observable<FleetCommand>((subscriber) => {
      // Per subscription: a second subscriber must discover every endpoint afresh.
      let config: Validated | undefined;
      let endpoints = new Map<string, Endpoint>();

      return source.subscribe(
        forwardingTo(subscriber, (input) => {
          if (input.type === 'config') {
            config = input.config;
            // A runtime-first configuration confirmed brings no change: it is deployed again to write its files.
            const reason = config.runtimeFirst === 'confirmed' ? 'confirmed' : 'change';
            report({ type: 'deploying', revision: config.revision, hash: config.hash, reason, endpoints: [...endpoints.keys()] });
            for (const endpoint of endpoints.values()) subscriber.next(deploy(endpoint, config, reason));
            return;
          }
          const previous = endpoints;
          // Map construction keeps the last entry for a repeated id.
          endpoints = new Map(input.endpoints.map((endpoint) => [endpoint.id, endpoint]));
          for (const id of previous.keys()) {
            if (!endpoints.has(id)) subscriber.next({ type: 'remove', endpointId: id });
          }
          const discovered = [...endpoints.values()].filter((endpoint) => previous.get(endpoint.id)?.url !== endpoint.url);
          if (config && discovered.length > 0) {
            report({ type: 'deploying', revision: config.revision, hash: config.hash, reason: 'discovered', endpoints: discovered.map((e) => e.id) });
          }
          for (const endpoint of discovered) {
            // A new url is a new HAProxy instance: the old one's deploy stream
            // must finish before one for the new instance starts.
            if (previous.has(endpoint.id)) subscriber.next({ type: 'remove', endpointId: endpoint.id });
            if (config) subscriber.next(deploy(endpoint, config, 'discovered'));
          }
        }),
      );
    });
}
