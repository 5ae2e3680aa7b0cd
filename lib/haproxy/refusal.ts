/**
 * What HAProxy said when `haproxy -c` refused a rendered configuration
 * checked in a private directory, told in terms of the render: each alert
 * with its place among the rendered files, the rendered line, the template
 * line that produced it and the objects whose values are on it. The
 * pipeline's validator and the admission webhook's small configurations
 * both read refusals through here.
 */
import type { DataplaneSettings } from '../config/types.ts';
import type { ConfigAlert, RenderedFiles, RenderOrigins } from '../pipeline/model.ts';
import { parseAlerts, underDirectory, type Relocate } from './alerts.ts';

export interface RefusalInput {
  /** `haproxy -c`'s output (the guard's refusals included, written as alerts). */
  readonly output: string;
  /** The private directory the files were checked in: taken out of every message. */
  readonly dir: string;
  readonly files: RenderedFiles;
  readonly origins: RenderOrigins;
  readonly dirs: Pick<DataplaneSettings, 'mapsDir' | 'certificatesDir' | 'generalDir'>;
  /** A line of the checked haproxy.cfg as a line of the rendered one, when the checker moved lines. */
  readonly originalLine?: (line: number) => number | undefined;
}

export interface Refusal {
  readonly alerts: readonly ConfigAlert[];
  readonly message: string;
}

/** Every rendered file by its target name (`haproxy.cfg`, `maps/host.map`...). */
function targetNames(files: RenderedFiles, dirs: RefusalInput['dirs']): Set<string> {
  const names = new Set(['haproxy.cfg']);
  const group = (dir: string, entries: Readonly<Record<string, string>>) => {
    for (const name of Object.keys(entries)) names.add(`${dir}/${name}`);
  };
  group(dirs.mapsDir, files.maps);
  group(dirs.certificatesDir, files.certificates);
  group(dirs.generalDir, files.files);
  return names;
}

export function readRefusal(input: RefusalInput): Refusal {
  const { dir, originalLine } = input;
  const clean = (message: string) => message.replaceAll(`${dir}/`, '').replaceAll(dir, '<check dir>');
  const targets = targetNames(input.files, input.dirs);
  const inDir = underDirectory(dir, (target) => targets.has(target));
  const relocate: Relocate =
    originalLine === undefined
      ? inDir
      : (path, line) => {
          const where = inDir(path, line);
          return where?.file === 'haproxy.cfg' && where.line !== undefined ? { file: where.file, line: originalLine(where.line) } : where;
        };
  const alerts = parseAlerts(input.output, relocate, clean);
  return { alerts, message: explain(alerts, input, clean) };
}

function explain(alerts: readonly ConfigAlert[], input: RefusalInput, clean: (text: string) => string): string {
  if (alerts.length === 0) return clean(input.output);
  const renderedLines = input.files.config.split('\n');
  return alerts
    .map((alert) => {
      const place = alert.locations.at(-1);
      if (!place) return alert.message;
      const origin = input.origins.get(place.file)?.[place.line - 1];
      const text = place.file === 'haproxy.cfg' ? renderedLines[place.line - 1] : undefined;
      const objects = origin && origin.objects.length > 0 ? `, values of ${origin.objects.join(', ')}` : '';
      return [
        `${place.file}:${place.line}: ${alert.detail}`,
        ...(text !== undefined ? [`  rendered: ${JSON.stringify(text.trim())}`] : []),
        ...(origin ? [`  from ${origin.template} line ${origin.line}${objects}`] : []),
      ].join('\n');
    })
    .join('\n');
}
