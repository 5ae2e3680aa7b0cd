/**
 * HAProxy's ALERT lines about a configuration, read for the places they
 * name, so that a refusal can be traced to the rendered line (and from there
 * to the objects whose values are on it). HAProxy 2.6 nests places: a bind
 * line names its crt-list, which names its own line ("parsing [c.cfg:9] :
 * 'bind ...' : 'crt-list' : parsing [cl.txt:1]: too many args"); the
 * innermost place is the one at fault.
 */
import type { AlertLocation, ConfigAlert } from '../pipeline/model.ts';

/**
 * Where a path HAProxy printed lives among the rendered files: its target
 * name, or undefined for a file the render did not write. `line`, when the
 * path came with one, may be moved (the validator adds a line of its own).
 */
export type Relocate = (path: string, line: number | undefined) => { readonly file: string; readonly line: number | undefined } | undefined;

/** The closing lines repeat what the located alerts already say. */
const SUMMARY = /Error\(s\) found in configuration file|Fatal errors found in configuration/;
const PREFIX = /^.*?\[ALERT\]\s*(?:\([^)]*\))?\s*:\s*(?:config\s*:\s*)?/;
const BRACKETED = /\[([^\]\s]+):(\d+)\]/g;
const LINE_IN_FILE = /line (\d+) in file '([^']+)'/g;
const QUOTED = /'([^'\s]+)'/g;
const SECTION = /\b(?:proxy|backend|frontend|listen)\s+'([^']+)'/gi;

/** The ALERT lines of `output` (from `haproxy -c`, or a master's log), with the places they name. */
export function parseAlerts(output: string, relocate: Relocate, clean: (text: string) => string = (text) => text): ConfigAlert[] {
  const alerts: ConfigAlert[] = [];
  for (const raw of output.split('\n')) {
    if (!raw.includes('[ALERT]') || SUMMARY.test(raw)) continue;
    const text = raw.replace(PREFIX, '');
    const found: { readonly at: number; readonly end: number; readonly location: AlertLocation }[] = [];
    const place = (match: RegExpMatchArray, path: string, line: number) => {
      const where = relocate(path, line);
      if (where?.line !== undefined) found.push({ at: match.index!, end: match.index! + match[0].length, location: { file: where.file, line: where.line } });
    };
    for (const match of text.matchAll(BRACKETED)) place(match, match[1]!, Number(match[2]));
    for (const match of text.matchAll(LINE_IN_FILE)) place(match, match[2]!, Number(match[1]));
    found.sort((a, b) => a.at - b.at);
    const innermost = found.at(-1);
    const files = new Set<string>();
    for (const match of text.matchAll(QUOTED)) {
      const file = relocate(match[1]!, undefined)?.file;
      if (file !== undefined) files.add(file);
    }
    alerts.push({
      message: clean(text.trim()),
      detail: clean((innermost ? text.slice(innermost.end).replace(/^\s*:?\s*/, '') : text).trim()),
      locations: found.map(({ location }) => location),
      files: [...files],
      sections: [...new Set(Array.from(text.matchAll(SECTION), (match) => match[1]!))],
    });
  }
  return alerts;
}

/**
 * A relocation for files laid out under `dir` (a validation directory, a
 * local HAProxy's work directory, `/etc/haproxy`): paths under it, or
 * relative to it, are the targets named `targets` knows.
 */
export function underDirectory(dir: string, targets: (target: string) => boolean): Relocate {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  return (path, line) => {
    const relative = path.startsWith(prefix) ? path.slice(prefix.length) : path;
    return targets(relative) ? { file: relative, line } : undefined;
  };
}
