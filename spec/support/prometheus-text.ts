/**
 * A strict reader of the Prometheus text exposition format (0.0.4) and of
 * OpenMetrics 1.0 text, for specs and benchmarks that scrape /metrics: any
 * line that is not a well-formed comment or sample throws, naming the line.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  readonly exemplar: { readonly labels: Readonly<Record<string, string>>; readonly value: number } | undefined;
}

export interface Family {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly samples: Sample[];
}

export type Exposition = ReadonlyMap<string, Family>;

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const types = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped', 'unknown', 'info', 'stateset', 'gaugehistogram']);

function number(text: string, where: string): number {
  if (text === '+Inf' || text === 'Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`${where}: not a number: ${JSON.stringify(text)}`);
  return Number(text);
}

/** Reads `{a="b",...}` at the start of `text`; returns the labels and what follows. */
function labelSet(text: string, where: string): [Record<string, string>, string] {
  const labels: Record<string, string> = {};
  let rest = text.slice(1);
  for (;;) {
    if (rest.startsWith('}')) return [labels, rest.slice(1)];
    const name = labelName.exec(rest)?.[0];
    if (!name || rest[name.length] !== '=' || rest[name.length + 1] !== '"') throw new Error(`${where}: bad label set at ${JSON.stringify(rest)}`);
    rest = rest.slice(name.length + 2);
    let value = '';
    for (;;) {
      const char = rest[0];
      if (char === undefined) throw new Error(`${where}: unterminated label value`);
      rest = rest.slice(1);
      if (char === '"') break;
      if (char === '\\') {
        const escaped = rest[0];
        rest = rest.slice(1);
        if (escaped === 'n') value += '\n';
        else if (escaped === '\\' || escaped === '"') value += escaped;
        else throw new Error(`${where}: bad escape \\${escaped}`);
      } else {
        value += char;
      }
    }
    if (name in labels) throw new Error(`${where}: label ${name} repeated`);
    labels[name] = value;
    if (rest.startsWith(',')) rest = rest.slice(1);
    else if (!rest.startsWith('}')) throw new Error(`${where}: expected , or } at ${JSON.stringify(rest)}`);
  }
}

/** The family a sample belongs to: its own name, or the name without a suffix its type allows. */
function familyOf(sample: string, family: Family | undefined, openMetrics: boolean): boolean {
  if (!family) return false;
  const suffixes: Record<string, readonly string[]> = {
    counter: openMetrics ? ['_total', '_created'] : [''],
    histogram: ['_bucket', '_sum', '_count', ...(openMetrics ? ['_created'] : [])],
    summary: ['', '_sum', '_count'],
    info: ['_info'],
  };
  return (suffixes[family.type] ?? ['']).some((suffix) => sample === `${family.name}${suffix}`);
}

export function parseExposition(text: string, options: { readonly openMetrics: boolean }): Exposition {
  const families = new Map<string, Family>();
  let current: Family | undefined;
  let pendingHelp: { name: string; help: string } | undefined;
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('the exposition does not end with a newline');
  lines.pop();
  if (options.openMetrics && lines.at(-1) !== '# EOF') throw new Error('an OpenMetrics exposition ends with # EOF');
  lines.forEach((line, index) => {
    const where = `line ${index + 1}`;
    if (line === '') {
      if (options.openMetrics) throw new Error(`${where}: blank lines are not allowed in OpenMetrics`);
      return;
    }
    if (line === '# EOF') {
      if (!options.openMetrics || index !== lines.length - 1) throw new Error(`${where}: unexpected # EOF`);
      return;
    }
    if (line.startsWith('#')) {
      const help = /^# HELP (\S+) ?(.*)$/.exec(line);
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (help) {
        if (!metricName.test(help[1]!) || metricName.exec(help[1]!)?.[0] !== help[1]) throw new Error(`${where}: bad metric name ${help[1]}`);
        pendingHelp = { name: help[1]!, help: help[2]! };
      } else if (type) {
        const [, name, kind] = type as unknown as [string, string, string];
        if (!types.has(kind)) throw new Error(`${where}: unknown type ${kind}`);
        if (families.has(name)) throw new Error(`${where}: family ${name} declared twice`);
        current = { name, type: kind, help: pendingHelp?.name === name ? pendingHelp.help : '', samples: [] };
        families.set(name, current);
      } else if (options.openMetrics) {
        throw new Error(`${where}: unknown comment ${JSON.stringify(line)}`);
      }
      return;
    }
    const name = metricName.exec(line)?.[0];
    if (!name) throw new Error(`${where}: no metric name in ${JSON.stringify(line)}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) [labels, rest] = labelSet(rest, where);
    let exemplar: Sample['exemplar'];
    const exemplarAt = rest.indexOf(' # ');
    if (exemplarAt !== -1) {
      if (!options.openMetrics) throw new Error(`${where}: exemplars exist only in OpenMetrics`);
      const [exemplarLabels, after] = labelSet(rest.slice(exemplarAt + 3), where);
      const [value] = after.trim().split(' ');
      exemplar = { labels: exemplarLabels, value: number(value ?? '', where) };
      rest = rest.slice(0, exemplarAt);
    }
    const parts = rest.trim().split(' ');
    if (!rest.startsWith(' ') || parts.length < 1 || parts.length > 2) throw new Error(`${where}: expected " value [timestamp]" in ${JSON.stringify(line)}`);
    const value = number(parts[0]!, where);
    if (parts[1] !== undefined) number(parts[1], where);
    if (!familyOf(name, current, options.openMetrics)) throw new Error(`${where}: sample ${name} outside its family (current: ${current?.name ?? 'none'})`);
    current!.samples.push({ name, labels, value, exemplar });
  });
  return families;
}

const matches = (sample: Sample, labels: Readonly<Record<string, string>>) => Object.entries(labels).every(([k, v]) => sample.labels[k] === v);

/** The value of the one sample with this name and these labels (others may be present); 0 when there is none. */
export function sampleValue(exposition: Exposition, name: string, labels: Readonly<Record<string, string>> = {}): number {
  const found = [...exposition.values()].flatMap((family) => family.samples).filter((s) => s.name === name && matches(s, labels));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}

/** A histogram's count and sum for these labels, summed over series that carry more labels. */
export function histogramTotals(exposition: Exposition, name: string, labels: Readonly<Record<string, string>> = {}): { count: number; sum: number } {
  const samples = exposition.get(name)?.samples ?? [];
  const total = (suffix: string) => samples.filter((s) => s.name === `${name}${suffix}` && matches(s, labels)).reduce((sum, s) => sum + s.value, 0);
  return { count: total('_count'), sum: total('_sum') };
}
