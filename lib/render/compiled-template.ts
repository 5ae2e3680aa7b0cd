import type { OriginTable } from './line-origins.ts';

/**
 * A Mustache token tree turned, once per template, into nodes that carry
 * everything a render would otherwise work out again for every value: the
 * split name, the template line of each tag and of each line a text starts,
 * the tag as error messages show it. Rendering then walks these nodes with
 * no parsing, no line search and no string splitting.
 */

/** Literal template text; its lines' origins are fixed when it is compiled. */
export interface TextNode {
  readonly kind: 'text';
  readonly text: string;
  /** Origin of the line the text starts on. */
  readonly firstId: number;
  /** Origins of the lines after each newline in the text, in order. */
  readonly nextIds: readonly number[];
  /** Whether text follows the last newline (so the text ends inside a line). */
  readonly endsInLine: boolean;
}

/** A tag that looks a name up: where it stands, for messages about what it read. */
export interface LookupTag {
  readonly name: string;
  readonly segments: readonly string[];
  readonly template: string;
  /** The template line of the tag (a section's opening tag). */
  readonly line: number;
}

/** `{{name}}` (a safe word) or `{{{name}}}` / `{{&name}}` (raw, one line). */
export interface ValueNode extends LookupTag {
  readonly kind: 'value';
  readonly raw: boolean;
  readonly id: number;
  /** The tag as written in messages. */
  readonly tag: string;
}

export interface SectionNode extends LookupTag {
  readonly kind: 'section';
  readonly children: readonly Node[];
  /** The section's own text, which a lambda receives. */
  readonly body: string;
}

export interface InvertedNode extends LookupTag {
  readonly kind: 'inverted';
  readonly children: readonly Node[];
}

export interface PartialNode {
  readonly kind: 'partial';
  readonly name: string;
  /** Mustache's standalone-partial indentation: whitespace before the tag, when it opens its line. */
  readonly indentation: string | undefined;
  readonly lineHasNonSpace: boolean;
}

export type Node = TextNode | ValueNode | SectionNode | InvertedNode | PartialNode;

type Token = [string, string, number, number, ...unknown[]];

/** Names split once; '.' is the current view and has no segments to walk. */
function segmentsOf(name: string): readonly string[] {
  return name === '.' ? [] : name.split('.');
}

/**
 * Compiles the tokens of one template (or partial) named `template`, whose
 * text is `source` (token offsets point into it).
 */
export function compileTokens(tokens: readonly unknown[], template: string, source: string, table: OriginTable): readonly Node[] {
  const starts = [0];
  for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) starts.push(i + 1);
  const lineOf = (offset: number): number => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (starts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  };

  const compile = (list: readonly unknown[]): Node[] => {
    const nodes: Node[] = [];
    for (const raw of list) {
      const token = raw as Token;
      const [type, value, start] = token;
      switch (type) {
        case 'text': {
          const line = lineOf(start);
          const nextIds: number[] = [];
          for (let i = value.indexOf('\n'), next = line + 1; i >= 0; i = value.indexOf('\n', i + 1), next++) nextIds.push(table.id(template, next));
          nodes.push({ kind: 'text', text: value, firstId: table.id(template, line), nextIds, endsInLine: !value.endsWith('\n') });
          break;
        }
        case 'name':
        case '&': {
          const line = lineOf(start);
          nodes.push({
            kind: 'value',
            raw: type === '&',
            name: value,
            segments: segmentsOf(value),
            id: table.id(template, line),
            template,
            line,
            tag: type === 'name' ? `{{${value}}}` : `{{{${value}}}}`,
          });
          break;
        }
        case '#':
          nodes.push({
            kind: 'section',
            name: value,
            segments: segmentsOf(value),
            children: compile(token[4] as unknown[]),
            template,
            line: lineOf(start),
            body: source.slice(token[3], token[5] as number),
          });
          break;
        case '^':
          nodes.push({ kind: 'inverted', name: value, segments: segmentsOf(value), children: compile(token[4] as unknown[]), template, line: lineOf(start) });
          break;
        case '>': {
          const [, , , , indentation, tagIndex, lineHasNonSpace] = token as [string, string, number, number, string, number, boolean];
          nodes.push({ kind: 'partial', name: value, indentation: tagIndex === 0 && indentation ? indentation : undefined, lineHasNonSpace });
          break;
        }
        // Comments ('!') and delimiter changes ('=') produce nothing.
      }
    }
    return nodes;
  };
  return compile(tokens);
}
