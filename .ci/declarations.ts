/**
 * A small reader of TypeScript declarations for the generated reference:
 * the interfaces, classes and type aliases of a source file, each member
 * with its type as written and its doc comment.
 *
 * Why not the compiler: the project's TypeScript is 7, the native compiler,
 * whose package exposes a JavaScript API only as `typescript/unstable/*`
 * (an RPC client to the Go binary), unstable by its own name. The project's
 * declarations are regular (one member per `;`, doc comments in `/** *\/`),
 * so reading the text is enough; what this reader cannot read it reports
 * rather than skips (`members` throws on a member it cannot parse).
 */

/** One member of a declaration: a property as a template reads it. */
export interface Member {
  readonly name: string;
  readonly optional: boolean;
  /** The type as written, on one line. */
  readonly type: string;
  readonly doc: string;
}

export interface Declaration {
  readonly name: string;
  readonly kind: 'interface' | 'class' | 'type';
  readonly doc: string;
  /** The declarations it extends (interfaces and classes). */
  readonly extends: readonly string[];
  /** Properties; for a type alias, the members of its object type, if it is one. */
  readonly members: readonly Member[];
  /** For a type alias, its type as written on one line. */
  readonly type?: string;
}

const closers: Readonly<Record<string, string>> = { '{': '}', '(': ')', '[': ']', '<': '>' };

/** The index after a comment or string literal starting at `at`, or `at` when none starts there. */
function skipLiteral(text: string, at: number): number {
  const two = text.slice(at, at + 2);
  if (two === '//') return text.indexOf('\n', at) === -1 ? text.length : text.indexOf('\n', at);
  if (two === '/*') return text.indexOf('*/', at + 2) + 2;
  const quote = text[at];
  if (quote !== "'" && quote !== '"' && quote !== '`') return at;
  let index = at + 1;
  while (index < text.length && text[index] !== quote) {
    if (text[index] === '\\') index += 1;
    else if (quote === '`' && text.slice(index, index + 2) === '${') index = closing(text, index + 1);
    index += 1;
  }
  return index + 1;
}

/** The first index from `at` that is code: not in a comment or string literal, and not an arrow's `=>` (whose `>` closes nothing). */
function codeAt(text: string, at: number): number {
  let index = at;
  for (;;) {
    const skipped = text.slice(index, index + 2) === '=>' ? index + 2 : skipLiteral(text, index);
    if (skipped === index) return index;
    index = skipped;
  }
}

/** The index of the bracket closing the one at `open`, skipping comments and strings. */
function closing(text: string, open: number): number {
  const stack: string[] = [];
  // Angle brackets pair only inside a type argument list: in code, `<` compares.
  const tracked = text[open] === '<' ? '{([<' : '{([';
  for (let index = codeAt(text, open); index < text.length; index = codeAt(text, index + 1)) {
    const char = text[index]!;
    if (tracked.includes(char)) stack.push(closers[char]!);
    else if (char === stack.at(-1)) {
      stack.pop();
      if (stack.length === 0) return index;
    }
  }
  throw new Error(`unbalanced "${text[open]}" at ${open}`);
}

/** Text up to the first of `stops` at bracket depth 0 (comments and strings skipped), and the index it stopped at. */
function until(text: string, from: number, stops: readonly string[]): { readonly text: string; readonly end: number } {
  let index = codeAt(text, from);
  while (index < text.length && !stops.includes(text[index]!)) {
    const char = text[index]!;
    index = codeAt(text, char in closers ? closing(text, index) + 1 : index + 1);
  }
  return { text: text.slice(from, Math.min(index, text.length)), end: index };
}

/** A doc comment's text on one line. */
export function docText(comment: string): string {
  return comment
    .replace(/^\/\*\*/, '')
    .replace(/\*\/$/, '')
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, '').trim())
    .filter((line) => line !== '')
    .join(' ');
}

/** Whitespace runs made one space, and a leading `|` of a multi-line union dropped. */
function oneLine(type: string): string {
  return type
    .replace(/\/\*\*[\s\S]*?\*\//g, '')
    .replace(/\s+/g, ' ')
    .replace(/^\s*\|\s*/, '')
    .trim();
}

const modifiers = new Set(['readonly', 'public', 'static', 'override', 'declare', 'abstract', 'private', 'protected', 'get', 'set', 'async']);

/** The properties of an object type body (between its braces). Methods, constructors, private and static members are left out. */
export function members(body: string): Member[] {
  const found: Member[] = [];
  let doc = '';
  let index = 0;
  while (index < body.length) {
    const rest = body.slice(index);
    const space = /^[\s;,]+/.exec(rest);
    if (space) {
      index += space[0].length;
      continue;
    }
    if (rest.startsWith('/**')) {
      const end = body.indexOf('*/', index) + 2;
      doc = docText(body.slice(index, end));
      index = end;
      continue;
    }
    const skipped = skipLiteral(body, index);
    if (skipped !== index) {
      index = skipped;
      continue;
    }
    const head = /^((?:[a-z]+\s+)*)(#?[A-Za-z_$][\w$]*|'[^']*'|"[^"]*"|\[[^\]]*\])(\?)?\s*/.exec(rest);
    if (!head) throw new Error(`cannot read the member at: ${rest.slice(0, 80)}`);
    const words = head[1]!.split(/\s+/).filter((word) => word !== '');
    const unknown = words.find((word) => !modifiers.has(word));
    if (unknown) throw new Error(`unknown modifier "${unknown}" at: ${rest.slice(0, 80)}`);
    let name = head[2]!.replace(/^['"]|['"]$/g, '');
    index += head[0].length;
    const after = body[index];
    if (after === '(' || after === '<') {
      // A method or the constructor: its parameters, return type and body are no property.
      const signature = until(body, index, ['{', ';', '\n']);
      index = body[signature.end] === '{' ? closing(body, signature.end) + 1 : signature.end;
      doc = '';
      continue;
    }
    const hidden = name.startsWith('#') || words.some((word) => word === 'private' || word === 'protected' || word === 'static');
    if (after === '=' && hidden) {
      index = until(body, index + 1, [';']).end;
      doc = '';
      continue;
    }
    if (after !== ':') throw new Error(`expected ":" after "${name}" at: ${rest.slice(0, 80)}`);
    const type = until(body, index + 1, [';', '=', ',']);
    index = type.end;
    if (body[index] === '=') index = until(body, index + 1, [';']).end;
    if (name.startsWith('[')) name = `<${name.slice(1).split(':')[0]!.trim()}>`;
    if (!hidden) found.push({ name, optional: head[3] === '?', type: oneLine(type.text), doc });
    doc = '';
  }
  return found;
}

/** Every interface, class and type alias declared at the top level of `source`, exported or not. */
export function declarations(source: string): Declaration[] {
  const found: Declaration[] = [];
  const start = /^(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(interface|class|type)\s+([A-Za-z_$][\w$]*)/gm;
  for (let match = start.exec(source); match; match = start.exec(source)) {
    const before = source.slice(0, match.index).trimEnd();
    const doc = before.endsWith('*/') ? docText(before.slice(before.lastIndexOf('/**'))) : '';
    const kind = match[1] as Declaration['kind'];
    const name = match[2]!;
    if (kind === 'type') {
      const equals = source.indexOf('=', match.index + match[0].length);
      const type = oneLine(until(source, equals + 1, [';']).text);
      const object = type.startsWith('{') && closing(type, 0) === type.length - 1;
      found.push({ name, kind, doc, extends: [], members: object ? members(type.slice(1, -1)) : [], type });
      continue;
    }
    const header = until(source, match.index + match[0].length, ['{']);
    const bases = /\bextends\s+([^{]*?)(?:\bimplements\b|$)/.exec(header.text.trim());
    const extended = bases ? bases[1]!.split(',').map((base) => base.trim().replace(/<.*$/, '')) : [];
    const open = header.end;
    found.push({ name, kind, doc, extends: extended, members: members(source.slice(open + 1, closing(source, open))) });
  }
  return found;
}
