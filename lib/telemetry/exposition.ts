/**
 * The Prometheus text format (0.0.4) of an OpenMetrics exposition, for
 * scrapers that do not ask for OpenMetrics: exemplars and `# EOF` dropped,
 * counter families named by their `_total` samples again (OpenMetrics names
 * a counter family without the suffix, the Prometheus format with it).
 */
export function openMetricsToPrometheus(text: string): string {
  const counters = new Set<string>();
  for (const match of text.matchAll(/^# TYPE (\S+) counter$/gm)) counters.add(match[1]!);
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line === '# EOF') continue;
    const meta = /^# (HELP|TYPE) (\S+)(.*)$/.exec(line);
    if (meta) {
      const [, keyword, name, rest] = meta as unknown as [string, string, string, string];
      lines.push(`# ${keyword} ${counters.has(name) ? `${name}_total` : name}${rest}`);
    } else if (line.startsWith('#')) {
      continue;
    } else {
      lines.push(withoutExemplar(line));
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The sample without its exemplar: everything from ` # ` after the label set, which may itself hold ` # `. */
function withoutExemplar(sample: string): string {
  let i = sample.indexOf('{');
  const space = sample.indexOf(' ');
  if (i !== -1 && (space === -1 || i < space)) {
    for (let quoted = false; i < sample.length; i++) {
      const char = sample[i];
      if (quoted && char === '\\') i++;
      else if (char === '"') quoted = !quoted;
      else if (char === '}' && !quoted) break;
    }
  } else {
    i = 0;
  }
  const exemplar = sample.indexOf(' # ', i);
  return exemplar === -1 ? sample : sample.slice(0, exemplar);
}
