import { compareCodeUnits } from '../compare.ts';
import { haproxyFamily } from './haproxy-family.ts';
import { nginxFamily, nginxIncFamily } from './nginx-family.ts';
import type { AnnotationFamily, DraftSettings, FamilyValues, ReadContext, RuleRead } from './rule.ts';
import type { AnnotationOutcome, ReadSettings } from './outcomes.ts';

export type { ReadContext } from './rule.ts';

/**
 * The families in precedence order: when two spell the same setting on
 * one object, haproxy.org/ (this controller's own dialect) is read and the
 * other family's annotations for that setting are ignored, naming it.
 * haproxy.com/ is haproxytech's other spelling of the same annotations;
 * nginx.org/ (another controller's) is only named, never read.
 */
/** The prefix of the settings of rules that only refuse or leave out (canary, ssl-passthrough, unservable authentication). */
const REFUSAL = 'unsupported.';

const FAMILIES: readonly AnnotationFamily[] = [haproxyFamily, { ...haproxyFamily, prefix: 'haproxy.com/' }, nginxFamily, nginxIncFamily];

/**
 * Reads the settings an object's annotations ask for, both families
 * (haproxy.org/* or haproxy.com/*, and nginx.ingress.kubernetes.io/*)
 * into one vocabulary.
 * Annotations of neither family are not read here: they stay reachable
 * by custom templates through the annotations view.
 *
 * `context` says what the annotations' meaning depends on: the object's
 * namespace (Secrets named without one) and whether an Ingress has TLS
 * (both controllers redirect those to HTTPS unless told not to). A family's
 * default applies only to an object carrying annotations of that family,
 * so an Ingress written for neither controller keeps this one's defaults.
 */
export function readAnnotationSettings(annotations: Readonly<Record<string, string>> | undefined, context: ReadContext = {}): ReadSettings {
  const draft: DraftSettings = { backend: {}, route: {} };
  const outcomes: AnnotationOutcome[] = [];
  /** Setting -> the annotation that set it. */
  const claimed = new Map<string, string>();
  const byFamily = FAMILIES.map((family) => ({ family, names: familyNames(annotations ?? {}, family.prefix) }));

  for (const { family, names } of byFamily) {
    if (names.size === 0) continue;
    const values: FamilyValues = (name) => (names.has(name) ? annotations![family.prefix + name] : undefined);
    const read = new Set<string>();
    for (const rule of family.rules) {
      const present = rule.annotations.filter((name) => names.has(name));
      if (present.length === 0) continue;
      for (const name of present) read.add(name);
      // A refusal sets nothing to compete for: each family's is judged, so one spelling cannot hide another's access rule.
      const owner = rule.setting.startsWith(REFUSAL) ? undefined : claimed.get(rule.setting);
      if (owner !== undefined) {
        for (const name of present) outcomes.push(ignored(family.prefix + name, values(name)!, `${owner} sets the same setting (${rule.setting}) on this object and takes precedence`));
        continue;
      }
      claimed.set(rule.setting, family.prefix + present[0]!);
      const result = rule.read(values, context);
      result.apply?.(draft);
      for (const name of present) outcomes.push(outcome(family.prefix + name, values(name)!, rule.setting, result));
    }
    for (const name of names) if (!read.has(name)) outcomes.push(ignored(family.prefix + name, values(name)!, family.unsupported(name)));
  }

  for (const { family, names } of byFamily) {
    if (names.size === 0) continue;
    for (const rule of family.rules) {
      if (rule.absent === undefined || claimed.has(rule.setting)) continue;
      claimed.set(rule.setting, family.prefix);
      rule.absent(context).apply?.(draft);
    }
  }

  outcomes.sort((a, b) => compareCodeUnits(a.annotation, b.annotation));
  return { backend: draft.backend, route: draft.route, outcomes };
}

function familyNames(annotations: Readonly<Record<string, string>>, prefix: string): Set<string> {
  const names = new Set<string>();
  for (const key of Object.keys(annotations)) if (key.startsWith(prefix) && key.length > prefix.length) names.add(key.slice(prefix.length));
  return names;
}

function outcome(annotation: string, value: string, setting: string, result: RuleRead): AnnotationOutcome {
  const name = annotation.slice(annotation.indexOf('/') + 1);
  const invalid = result.invalid?.[name];
  if (invalid !== undefined) return { annotation, value, status: 'invalid', reason: invalid };
  const leftOut = result.leftOut?.[name];
  if (leftOut !== undefined) return { annotation, value, status: 'left out', reason: leftOut };
  const reason = result.ignored?.[name];
  if (reason !== undefined) return ignored(annotation, value, reason);
  return { annotation, value, status: 'honoured', setting };
}

function ignored(annotation: string, value: string, reason: string): AnnotationOutcome {
  return { annotation, value, status: 'ignored', reason };
}
