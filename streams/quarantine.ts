import { concatMap, defer, map, of, switchMap, take, tap, throwIfEmpty, type Observable, type OperatorFunction } from 'rxjs';
import { Bisection } from '../lib/pipeline/bisection.ts';
import { blame, type Culprit, type Suspects } from '../lib/pipeline/blame.ts';
import type { KubeObject, Rendered, ValidationVerdict } from '../lib/pipeline/model.ts';
import type { Report } from '../lib/pipeline/outcome.ts';
import type { Quarantine } from '../lib/pipeline/quarantine.ts';
import { renderedFrom } from '../lib/pipeline/rendered.ts';
import type { RenderEffect } from './effects.ts';

/** A configuration with HAProxy's verdict on it. */
export interface Judged {
  readonly config: Rendered;
  readonly verdict: ValidationVerdict;
  /** Validations it took so far, the first included. */
  readonly validations: number;
}

export interface QuarantineOptions {
  readonly render: RenderEffect;
  /** One verdict (valid or invalid) on a configuration, or nothing when the work was given up. */
  readonly check: (config: Rendered) => Observable<ValidationVerdict>;
  readonly book: Quarantine;
  readonly report: Report;
  /** Validations one configuration may take, its first included, before it is left invalid. Default 32. */
  readonly maxValidations?: number;
}

/**
 * Repairs configurations HAProxy refused because of objects: the objects
 * the refused lines carry are quarantined (left out of this render and of
 * every later one until they change), the configuration is rendered again
 * without them and validated again, until it is accepted or nothing more
 * can be blamed. An object alone on a refused line costs one render and one
 * validation more; where the alerts name no single object (several on the
 * line, only a section, or nothing), the culprit is searched by bisection
 * among the suspects. A refusal no object explains (the template's) is
 * passed on as it is: the configuration stays invalid and the last good one
 * keeps serving. Valid configurations pass untouched.
 */
export function quarantine(options: QuarantineOptions): OperatorFunction<Judged, Judged> {
  const maxValidations = options.maxValidations ?? 32;
  const { book } = options;

  const renderWithout = (config: Rendered, also: readonly KubeObject[]): Observable<Rendered> =>
    defer(() => options.render({ ...config.snapshot, stores: book.hide(config.snapshot.stores, also) })).pipe(
      take(1),
      throwIfEmpty(() => new Error(`render of revision ${config.snapshot.revision} produced no configuration`)),
      map((output) => renderedFrom(output, config, book.problems)),
    );

  const judge = (config: Rendered, validations: number): Observable<Judged> =>
    options.check(config).pipe(
      take(1),
      map((verdict) => ({ config, verdict, validations: validations + 1 })),
    );

  const gaveUp = (judged: Judged): Judged =>
    judged.verdict.status !== 'invalid'
      ? judged
      : { ...judged, verdict: { ...judged.verdict, message: `gave up looking for the objects at fault after ${judged.validations} validations: ${judged.verdict.message}` } };

  const repair = (judged: Judged): Observable<Judged> =>
    defer(() => {
      const { verdict } = judged;
      if (verdict.status !== 'invalid') return of(judged);
      if (judged.validations >= maxValidations) return of(gaveUp(judged));
      const found = blame(judged.config, verdict.alerts);
      if (found.culprits.length > 0) return quarantineAndJudge(judged, found.culprits);
      const [suspects] = found.suspects;
      return suspects ? bisect(judged, suspects) : of(judged);
    });

  const quarantineAndJudge = (judged: Judged, culprits: readonly Culprit[]): Observable<Judged> => {
    const added = book.add(culprits, judged.config.snapshot.stores);
    return renderWithout(judged.config, []).pipe(
      switchMap((config) => judge(config, judged.validations)),
      tap((next) => {
        if (added.length === 0) return;
        const { config } = next;
        options.report({
          type: 'quarantined',
          by: 'validation',
          revision: config.revision,
          hash: config.hash,
          objects: added,
          files: config.files,
          excluded: config.excluded,
          warnings: config.warnings,
          total: book.size,
          validations: next.validations,
        });
      }),
      switchMap(repair),
    );
  };

  const bisect = (judged: Judged, suspects: Suspects): Observable<Judged> => {
    const search = new Bisection(suspects.sources);
    let validations = judged.validations;
    const step = (): Observable<Judged> =>
      defer(() => {
        const next = search.next();
        if (next.type === 'unexplained') return of({ ...judged, validations });
        if (next.type === 'found') return quarantineAndJudge({ ...judged, validations }, [{ source: next.culprit, message: suspects.message }]);
        if (validations >= maxValidations) return of(gaveUp({ ...judged, validations }));
        return renderWithout(
          judged.config,
          next.without.map((source) => source.object),
        ).pipe(
          switchMap((trial) => judge(trial, validations)),
          switchMap((result) => {
            validations = result.validations;
            search.record(result.verdict.status === 'valid');
            return step();
          }),
        );
      });
    return step();
  };

  return concatMap(repair);
}
