import { compareCodeUnits } from '../compare.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { readAuthUsers, type AuthUsers } from './auth-users.ts';
import { readAnnotationSettings } from './read-settings.ts';
import { type SecretRef } from '../routing/settings.ts';
import { excludesObject, type AnnotationOutcome, type ReadSettings } from './outcomes.ts';

/**
 * The migration report: what each Ingress's annotations will do under this
 * controller (honoured, ignored and why, invalid and why), whose basic-auth
 * users cannot log in, and a summary by annotation. Pure: the caller reads
 * the Ingresses and fetches the Secrets they name.
 */

/** A Secret as fetched for the report: its data, or why it could not be read. */
export type FetchedSecret = { readonly data: Readonly<Record<string, string>> | undefined } | { readonly problem: string };

export interface IngressReport {
  /** namespace/name */
  readonly ingress: string;
  /** Where it was read from (a manifest file and document), when known. */
  readonly source?: string;
  readonly settings: ReadSettings;
  readonly notes?: IngressNotes;
  readonly auth?: { readonly secret: string; readonly users?: AuthUsers; readonly problem?: string };
}

/** What else keeps an Ingress from being served as ingress-nginx served it (lib/cli/migration-notes.ts finds it). */
export interface IngressNotes {
  /** Why it is not served for its class. */
  readonly class?: string;
  /** Each host it shares with namespaces that may not share with its own, and what that does. */
  readonly hosts: readonly string[];
}

export interface AnnotationCount {
  readonly annotation: string;
  readonly honoured: number;
  readonly ignored: number;
  readonly invalid: number;
  readonly 'left out': number;
}

export interface MigrationReport {
  readonly ingresses: readonly IngressReport[];
  readonly summary: readonly AnnotationCount[];
}

export const secretKey = (ref: SecretRef): string => `${ref.namespace}/${ref.name}`;

export const isIngress = (object: KubeObject): boolean => object.kind === 'Ingress';

/** The settings an Ingress's annotations read to, with what they depend on (its namespace, whether it has TLS). */
export function ingressSettings(ingress: KubeObject): ReadSettings {
  const tls = ingress['spec'] as { tls?: unknown } | undefined;
  return readAnnotationSettings(ingress.metadata.annotations, { namespace: ingress.metadata.namespace ?? 'default', tls: Array.isArray(tls?.tls) && tls.tls.length > 0 });
}

/** `notes`: per Ingress (namespace/name), what else a migrating user must know of it (lib/cli/migration-notes.ts). */
export function migrationReport(
  ingresses: readonly { readonly object: KubeObject; readonly source?: string }[],
  secrets: ReadonlyMap<string, FetchedSecret>,
  notes: ReadonlyMap<string, IngressNotes> = new Map(),
): MigrationReport {
  const reports = ingresses
    .map(({ object, source }): IngressReport => {
      const settings = ingressSettings(object);
      const secret = settings.route.basicAuth?.secret;
      const key = `${object.metadata.namespace ?? 'default'}/${object.metadata.name}`;
      const noted = notes.get(key);
      const report = { ingress: key, ...(source === undefined ? {} : { source }), settings, ...(noted === undefined ? {} : { notes: noted }) };
      if (secret === undefined) return report;
      const fetched = secrets.get(secretKey(secret)) ?? { problem: 'not read' };
      return { ...report, auth: { secret: secretKey(secret), ...('problem' in fetched ? { problem: fetched.problem } : { users: readAuthUsers(fetched.data) }) } };
    })
    .sort((a, b) => compareCodeUnits(a.ingress, b.ingress));
  return { ingresses: reports, summary: summarise(reports.flatMap((report) => report.settings.outcomes)) };
}

function summarise(outcomes: readonly AnnotationOutcome[]): AnnotationCount[] {
  const counts = new Map<string, { -readonly [K in Exclude<keyof AnnotationCount, 'annotation'>]: number }>();
  for (const outcome of outcomes) {
    const count = counts.get(outcome.annotation) ?? { honoured: 0, ignored: 0, invalid: 0, 'left out': 0 };
    count[outcome.status]++;
    counts.set(outcome.annotation, count);
  }
  return [...counts].sort(([a], [b]) => compareCodeUnits(a, b)).map(([annotation, count]) => ({ annotation, ...count }));
}

const MAX_SHOWN = 60;

/** An annotation's value on one line: quoted, escaped, cut. */
function shown(value: string): string {
  const quoted = JSON.stringify(value);
  return quoted.length > MAX_SHOWN ? `${quoted.slice(0, MAX_SHOWN - 4)}..."` : quoted;
}

function outcomeLine(outcome: AnnotationOutcome): string {
  const head = `  ${outcome.status.padEnd(8)}  ${outcome.annotation}: ${shown(outcome.value)}`;
  return outcome.status === 'honoured' ? `${head} -> ${outcome.setting}` : `${head}: ${outcome.reason}`;
}

function authLines(auth: NonNullable<IngressReport['auth']>): string[] {
  if (auth.problem !== undefined) return [`  auth      Secret ${auth.secret}: ${auth.problem}; no user can log in`];
  const users = auth.users!;
  const lines = users.users.flatMap((user) => (user.status === 'unusable' ? [`  auth      Secret ${auth.secret}: user ${JSON.stringify(user.name)} cannot log in: ${user.reason}`] : []));
  lines.push(...users.malformed.map((what) => `  auth      Secret ${auth.secret}: ${what}`));
  const usable = users.users.filter((user) => user.status === 'usable').length;
  if (usable === 0) lines.push(`  auth      Secret ${auth.secret}: no user can log in`);
  else lines.push(`  auth      Secret ${auth.secret}: ${usable} of ${users.users.length} users can log in (${users.format})`);
  return lines;
}

/** HSTS set by no annotation: ingress-nginx's default, which its family brings (lib/annotations/shared-rules.ts). */
const HSTS_BY_DEFAULT =
  '  default   Strict-Transport-Security on HTTPS answers, as ingress-nginx\'s ConfigMap default (hsts: "true"); nginx.ingress.kubernetes.io/hsts: "false" turns it off';

/** The report as text: per Ingress, then the summary table. */
export function formatMigrationReport(report: MigrationReport): string {
  const lines: string[] = [];
  for (const ingress of report.ingresses) {
    lines.push(`Ingress ${ingress.ingress}${ingress.source === undefined ? '' : ` (${ingress.source})`}`);
    const { backend, route, outcomes } = ingress.settings;
    if (outcomes.length === 0) lines.push('  no haproxy.org/ or nginx.ingress.kubernetes.io/ annotations');
    lines.push(...outcomes.map(outcomeLine));
    if (route.hsts !== undefined && !outcomes.some((outcome) => outcome.annotation.endsWith('/hsts'))) lines.push(HSTS_BY_DEFAULT);
    if (outcomes.some((outcome) => outcome.status === 'invalid')) lines.push('  excluded  an invalid annotation leaves this Ingress out (its routes are not served) until it is fixed');
    else if (outcomes.some((outcome) => outcome.status === 'left out'))
      lines.push('  excluded  this Ingress is left out (its routes are not served): an annotation asks for what cannot be served here');
    if (ingress.notes?.class !== undefined) lines.push(`  class     ${ingress.notes.class}`);
    lines.push(...(ingress.notes?.hosts ?? []).map((note) => `  host      ${note}`));
    if (ingress.auth !== undefined) lines.push(...authLines(ingress.auth));
    if (Object.keys(backend).length > 0) lines.push(`  backend settings: ${JSON.stringify(backend)}`);
    if (Object.keys(route).length > 0) lines.push(`  route settings: ${JSON.stringify(route)}`);
    lines.push('');
  }
  lines.push(...summaryTable(report), '');
  return lines.join('\n');
}

function summaryTable(report: MigrationReport): string[] {
  const total = report.summary.reduce(
    (sum, count) => ({
      honoured: sum.honoured + count.honoured,
      ignored: sum.ignored + count.ignored,
      invalid: sum.invalid + count.invalid,
      'left out': sum['left out'] + count['left out'],
    }),
    { honoured: 0, ignored: 0, invalid: 0, 'left out': 0 },
  );
  const rows = [...report.summary, { annotation: 'total', ...total }];
  const width = Math.max('annotation'.length, ...rows.map((row) => row.annotation.length));
  const row = (name: string, ...counts: readonly (string | number)[]) => `${name.padEnd(width)}${counts.map((count, i) => `  ${String(count).padStart([8, 7, 7, 8][i]!)}`).join('')}`;
  const excluded = report.ingresses.filter((ingress) => ingress.settings.outcomes.some(excludesObject)).length;
  const unserved = report.ingresses.filter((ingress) => ingress.notes?.class !== undefined).length;
  return [
    `Summary: ${report.ingresses.length} Ingresses (${unserved} not of the class served, ${excluded} left out by their annotations), by annotation`,
    row('annotation', 'honoured', 'ignored', 'invalid', 'left out'),
    ...rows.map((count) => row(count.annotation, count.honoured, count.ignored, count.invalid, count['left out'])),
  ];
}
