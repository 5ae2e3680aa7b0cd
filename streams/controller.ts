import { distinctUntilChanged, filter, map, Observable, switchMap, type OperatorFunction } from 'rxjs';
import type { ConfigLoad } from '../lib/config/types.ts';
import { errorMessage } from '../lib/error-message.ts';
import type { DeployOutcome, Outcome, Report } from '../lib/pipeline/outcome.ts';

export type { ConfigLoad };

export interface ControllerOptions<Raw, Config> {
  /** Parses and checks a configuration candidate completely, before anything uses it; what it throws rejects the candidate. */
  readonly load: (raw: Raw) => ConfigLoad<Config>;
  /** Builds and runs the whole pipeline for one valid configuration. */
  readonly pipeline: (config: Config, report: Report) => Observable<DeployOutcome>;
}

/**
 * The controller: its own configuration is a stream of candidates. A valid
 * one re-initialises the whole pipeline (switchMap tears the old one down,
 * and the new one takes over what the mode keeps, see kept.ts);
 * an invalid one is reported and filtered out before switchMap, so the
 * running pipeline keeps going untouched; so is a candidate whose loading
 * throws (a fault of the loader is no reason to stop serving). Every outcome
 * comes out of this one stream.
 */
export function controller<Raw, Config>(options: ControllerOptions<Raw, Config>): OperatorFunction<Raw, Outcome> {
  return (candidates) =>
    new Observable<Outcome>((subscriber) => {
      const report: Report = (outcome) => subscriber.next(outcome);
      let generation = 0;
      return candidates
        .pipe(
          distinctUntilChanged(),
          map((raw): ConfigLoad<Config> => {
            try {
              return options.load(raw);
            } catch (error) {
              return { ok: false, errors: [`the configuration could not be loaded: ${errorMessage(error)}`] };
            }
          }),
          filter((loaded): loaded is Extract<ConfigLoad<Config>, { ok: true }> => {
            if (!loaded.ok) report({ type: 'configRejected', errors: loaded.errors });
            return loaded.ok;
          }),
          switchMap(({ config }) => {
            report({ type: 'configApplied', generation: ++generation });
            return options.pipeline(config, report);
          }),
        )
        .subscribe(subscriber);
    });
}
