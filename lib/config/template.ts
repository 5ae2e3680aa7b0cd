import Mustache from 'mustache';

/** A Mustache template parsed once, when the configuration loads. */
export interface Template {
  /** Where it comes from in the configuration, e.g. `templates.maps.host.map`. */
  readonly name: string;
  readonly source: string;
  /** Partial names it refers to with `{{> name}}`. */
  readonly partials: readonly string[];
  /** Mustache's parse tree, rendered directly so parsing happens once per configuration. */
  readonly tokens: readonly unknown[];
}

/** A template that cannot be parsed; the message names the template and the line. */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

type Token = [string, string, number, number, Token[]?, ...unknown[]];

function lineOf(source: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < source.length; i++) if (source[i] === '\n') line++;
  return line;
}

function collectPartials(tokens: readonly Token[], into: Set<string>): void {
  for (const token of tokens) {
    if (token[0] === '>') into.add(token[1]);
    const children = token[4];
    if (Array.isArray(children)) collectPartials(children, into);
  }
}

/**
 * Mustache reports an unclosed section at the end of the text; the author
 * needs the line that opened it: the last opening tag of that name left
 * without its closing tag.
 */
function openingLine(source: string, section: string): number | undefined {
  const escaped = section.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const tags = new RegExp(`\\{\\{\\s*([#^/])\\s*${escaped}\\s*\\}\\}`, 'g');
  const open: number[] = [];
  for (const match of source.matchAll(tags)) {
    if (match[1] === '/') open.pop();
    else open.push(match.index);
  }
  const offset = open.at(-1);
  return offset === undefined ? undefined : lineOf(source, offset);
}

/**
 * Parses a template (Mustache caches the parse by its text, so rendering
 * reuses it) and turns Mustache's character offsets into line numbers.
 */
export function compileTemplate(name: string, source: string): Template {
  let tokens: Token[];
  try {
    // A private writer: Mustache.parse would cache every template text ever
    // loaded in the library's global, unbounded cache.
    tokens = new Mustache.Writer().parse(source) as Token[];
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const at = /^(.*) at (\d+)$/.exec(message);
    if (!at) throw new TemplateError(`${name}: ${message}`);
    const what = at[1]!;
    const section = /^Unclosed section "(.*)"$/.exec(what)?.[1];
    const line = (section !== undefined ? openingLine(source, section) : undefined) ?? lineOf(source, Number(at[2]));
    throw new TemplateError(`${name}: line ${line}: ${what.charAt(0).toLowerCase()}${what.slice(1)}`);
  }
  const partials = new Set<string>();
  collectPartials(tokens, partials);
  return { name, source, partials: [...partials].sort(), tokens };
}
