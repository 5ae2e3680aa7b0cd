import type { ReadSettings } from './settings.ts';

const NO_SETTINGS: ReadSettings = Object.freeze({ backend: Object.freeze({}), route: Object.freeze({}), outcomes: Object.freeze([]) });

/**
 * Reads the settings an object's annotations ask for, both families
 * (haproxy.org/* and nginx.ingress.kubernetes.io/*) into one vocabulary.
 * Annotations of neither family are not read here: they stay reachable
 * by custom templates through the annotations view.
 */
export function readAnnotationSettings(_annotations: Readonly<Record<string, string>> | undefined): ReadSettings {
  // Issue 18: the parsers of both families replace this in the branch that builds them.
  return NO_SETTINGS;
}
