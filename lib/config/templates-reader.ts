import { formatPath, type Path, type Problems } from './problems.ts';
import { fields, named, readMatching, readString, required } from './readers.ts';
import { rules, type Rule } from './rules.ts';
import { controllerConfigSchema } from './schema.ts';
import { fieldNames } from './setting-reader.ts';
import { compileTemplate, TemplateError, type Template } from './template.ts';
import type { Templates } from './types.ts';
import { CONTROLLER_LUA } from '../lua/controller-scripts.ts';

/** `templates`: every template compiled, and every partial they use defined. */

function compile(problems: Problems, source: string, at: Path): Template {
  const name = formatPath(at);
  try {
    return compileTemplate(name, source);
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    // TemplateError names the template; the path in front of the problem already does.
    const prefix = `${name}: `;
    problems.add(at, error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message);
    return placeholder(at);
  }
}

/** Stands in for a template that failed to load, so the rest can still be checked; never rendered, since loading fails. */
function placeholder(at: Path): Template {
  return compileTemplate(formatPath(at), '');
}

/** Invalid templates stay in the map (compiled empty) so references to them are not reported as missing too. */
function readTemplateMap(problems: Problems, value: unknown, at: Path, rule: Rule): Map<string, Template> {
  const templates = new Map<string, Template>();
  if (value === undefined) return templates;
  for (const [name, source] of named(problems, value, at, rule)) {
    const text = readString(problems, source, [...at, name]);
    templates.set(name, text === undefined ? placeholder([...at, name]) : compile(problems, text, [...at, name]));
  }
  return templates;
}

const schema = controllerConfigSchema.fields.templates;
const { fields: setting } = schema;

export function readTemplates(problems: Problems, value: unknown, at: Path): Templates {
  const raw = required(problems, value, at, (v, p) => fields(problems, v, p, fieldNames(schema)));
  const mainAt = [...at, 'haproxyConfig'];
  const main = raw && required(problems, raw.haproxyConfig, mainAt, (v, p) => readMatching(problems, v, p, rules.nonEmpty));
  const templates: Templates = {
    haproxyConfig: main === undefined ? placeholder(mainAt) : compile(problems, main, mainAt),
    partials: readTemplateMap(problems, raw?.partials, [...at, 'partials'], setting.partials.name),
    maps: readTemplateMap(problems, raw?.maps, [...at, 'maps'], setting.maps.name),
    files: readTemplateMap(problems, raw?.files, [...at, 'files'], setting.files.name),
    certificates: readTemplateMap(problems, raw?.certificates, [...at, 'certificates'], setting.certificates.name),
  };
  checkPartials(problems, templates, at);
  // The controller writes its own Lua scripts under these names, which the directive guard lets lua-load name.
  for (const group of ['maps', 'files', 'certificates'] as const) {
    for (const file of CONTROLLER_LUA.keys()) {
      if (templates[group].has(file)) problems.add([...at, group, file], "is the name of one of the controller's own Lua scripts, which no template may write");
    }
  }
  return templates;
}

function checkPartials(problems: Problems, templates: Templates, at: Path): void {
  const all: [Path, Template][] = [[[...at, 'haproxyConfig'], templates.haproxyConfig]];
  for (const group of ['partials', 'maps', 'files', 'certificates'] as const) {
    for (const [name, template] of templates[group]) all.push([[...at, group, name], template]);
  }
  for (const [templateAt, template] of all) {
    for (const partial of template.partials) {
      if (!templates.partials.has(partial)) {
        problems.add(templateAt, `uses partial ${JSON.stringify(partial)}, which ${formatPath([...at, 'partials'])} does not define`);
      }
    }
  }
}
