/**
 * The field paths of an Ingress's rules and their paths, which its routes
 * and hosts keep to name where they came from. Nearly every Ingress has its
 * first few rules and paths, so those paths are made once and shared: made
 * per Ingress, each was a tree of string pieces of its own (`${rule}.host`
 * over `spec.rules[${i}]`), about 2 MiB at 10k Ingresses.
 */
const SHARED = 8;

const made = (rule: number) => `spec.rules[${rule}]`;
const RULES: readonly string[] = Array.from({ length: SHARED }, (_, rule) => made(rule));
const HOSTS: readonly string[] = RULES.map((rule) => `${rule}.host`);
const PATHS: readonly (readonly string[])[] = RULES.map((rule) => Array.from({ length: SHARED }, (_, path) => `${rule}.http.paths[${path}]`));

/** `spec.rules[<rule>]`. */
export function ruleField(rule: number): string {
  return RULES[rule] ?? made(rule);
}

/** `spec.rules[<rule>].host`. */
export function hostField(rule: number): string {
  return HOSTS[rule] ?? `${made(rule)}.host`;
}

/** `spec.rules[<rule>].http.paths[<path>]`. */
export function pathField(rule: number, path: number): string {
  return PATHS[rule]?.[path] ?? `${made(rule)}.http.paths[${path}]`;
}
