import type { ConfigAlert, LineOrigin, RenderedFiles, RenderOrigins, ValueSource } from './model.ts';

/**
 * Who is at fault when HAProxy refuses a rendered configuration: the
 * objects whose values are on the lines its alerts name. Pure: it reads the
 * render's files and line origins, never HAProxy.
 */

/** An object at fault, with what HAProxy said about its line. */
export interface Culprit {
  readonly source: ValueSource;
  readonly message: string;
}

/** Objects one or more of which are at fault for an alert, and that alert's message. */
export interface Suspects {
  readonly sources: readonly ValueSource[];
  readonly message: string;
}

export interface Blame {
  /** Objects alone on a line an alert names: left out at once. */
  readonly culprits: readonly Culprit[];
  /** For alerts that name no single object: the objects to search by bisection. */
  readonly suspects: readonly Suspects[];
  /** Alerts no object can explain: the template's, or HAProxy's own. */
  readonly unexplained: readonly ConfigAlert[];
}

export interface BlameInput {
  readonly files: RenderedFiles;
  readonly origins: RenderOrigins;
}

/** Each object once (by label), in the order met. */
function distinct(sources: Iterable<ValueSource>): ValueSource[] {
  const seen = new Map<string, ValueSource>();
  for (const source of sources) if (!seen.has(source.label)) seen.set(source.label, source);
  return [...seen.values()];
}

/** The text of every rendered file but certificates (which are PEM), by target name. */
function textFiles(input: BlameInput): Map<string, string> {
  const texts = new Map<string, string>([['haproxy.cfg', input.files.config]]);
  for (const [target, origins] of input.origins) {
    if (target === 'haproxy.cfg' || origins.length === 0) continue;
    const slash = target.indexOf('/');
    const name = target.slice(slash + 1);
    const text = input.files.maps[name] ?? input.files.files[name];
    if (text !== undefined) texts.set(target, text);
  }
  return texts;
}

const SECTION_HEADER = /^(?:frontend|backend|listen|defaults|global|peers|resolvers|userlist|program|http-errors|ring|cache|fcgi-app|log-forward|mailers)(?=\s|$)(?:\s+(\S+))?/;

/** The lines (0-based) of the haproxy.cfg sections whose header `wanted` picks (by its index and name). */
function sectionLines(config: readonly string[], wanted: (index: number, name: string) => boolean): number[] {
  const lines: number[] = [];
  let inside = false;
  for (let i = 0; i < config.length; i++) {
    const header = SECTION_HEADER.exec(config[i]!);
    if (header) inside = wanted(i, header[1] ?? '');
    if (inside) lines.push(i);
  }
  return lines;
}

/** The index of the header of the section that holds `index`. */
function headerOf(config: readonly string[], index: number): number {
  for (let i = Math.min(index, config.length - 1); i >= 0; i--) if (SECTION_HEADER.test(config[i]!)) return i;
  return -1;
}

/**
 * Reads what the alerts say against the render that was refused. An alert
 * whose innermost place is a line with values of one object blames that
 * object; several objects on the line are suspects. A line without object
 * values, or no line at all, widens the search: lines that name a file the
 * alert quotes (a crt-list line naming a certificate), then the section
 * the line is in or the proxies the alert names, then every object of the
 * configuration. A template line all of whose rendered lines (two or more)
 * are refused is the template's fault, whatever objects are on them.
 */
export function blame(input: BlameInput, alerts: readonly ConfigAlert[]): Blame {
  const culprits = new Map<string, Culprit>();
  const suspects: Suspects[] = [];
  const unexplained: ConfigAlert[] = [];
  const config = input.files.config.split('\n');
  const texts = textFiles(input);
  const originsOf = (file: string): readonly LineOrigin[] => input.origins.get(file) ?? [];
  const alerted = new Map<string, number>();
  const templateLine = (origin: LineOrigin, file: string) => `${file}\u0000${origin.template}\u0000${origin.line}`;
  for (const alert of alerts) {
    const place = alert.locations.at(-1);
    const origin = place && originsOf(place.file)[place.line - 1];
    if (origin && origin.sources.length > 0) {
      const key = templateLine(origin, place.file);
      alerted.set(key, (alerted.get(key) ?? 0) + 1);
    }
  }
  const renderedFrom = (file: string, origin: LineOrigin) => originsOf(file).filter((other) => other.template === origin.template && other.line === origin.line).length;

  const sourcesOf = (file: string, lines: Iterable<number>) => {
    const origins = originsOf(file);
    const found: ValueSource[] = [];
    for (const line of lines) found.push(...(origins[line]?.sources ?? []));
    return found;
  };
  const mentioning = (path: string) => {
    const found: ValueSource[] = [];
    for (const [file, text] of texts) {
      const lines: number[] = [];
      text.split('\n').forEach((line, index) => line.includes(path) && lines.push(index));
      found.push(...sourcesOf(file, lines));
    }
    return found;
  };
  const everything = () => {
    const found: ValueSource[] = [];
    for (const origins of input.origins.values()) for (const origin of origins) found.push(...origin.sources);
    return found;
  };

  for (const alert of alerts) {
    const place = alert.locations.at(-1);
    const message = place ? `${place.file}:${place.line}: ${alert.detail}` : alert.message;
    const origin = place && originsOf(place.file)[place.line - 1];
    if (origin && origin.sources.length > 0) {
      const count = renderedFrom(place.file, origin);
      if (count >= 2 && alerted.get(templateLine(origin, place.file)) === count) unexplained.push(alert);
      else if (origin.sources.length === 1) culprits.set(origin.sources[0]!.label, { source: origin.sources[0]!, message });
      else suspects.push({ sources: distinct(origin.sources), message });
      continue;
    }
    let found = distinct(alert.files.flatMap(mentioning));
    if (found.length === 1) {
      culprits.set(found[0]!.label, { source: found[0]!, message });
      continue;
    }
    if (found.length === 0 && (place?.file === 'haproxy.cfg' || alert.sections.length > 0)) {
      const header = place?.file === 'haproxy.cfg' ? headerOf(config, place.line - 1) : -1;
      const lines = sectionLines(config, (index, name) => (place?.file === 'haproxy.cfg' ? index === header : alert.sections.includes(name)));
      found = distinct(sourcesOf('haproxy.cfg', lines));
    }
    if (found.length === 0) found = distinct(everything());
    if (found.length === 0) unexplained.push(alert);
    else suspects.push({ sources: found, message });
  }
  return { culprits: [...culprits.values()], suspects, unexplained };
}
