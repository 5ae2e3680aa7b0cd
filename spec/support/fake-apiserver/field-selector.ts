/**
 * Field selectors as the API server parses them (k8s.io/apimachinery
 * fields.ParseSelector): comma-separated `field=value`, `field==value` or
 * `field!=value` terms, where `\`, `,` and `=` in a value are escaped with
 * a backslash. Values are compared as strings; a field the object lacks is
 * the empty string, as in the server's field sets.
 */
import type { KubeObject } from './resource-types.ts';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

/** Splits at separators not preceded by an escaping backslash. */
function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let index = 0; index < text.length; index++) {
    const character = text[index]!;
    if (character === '\\' && index + 1 < text.length) {
      current += character + text[index + 1];
      index++;
    } else if (character === separator) {
      parts.push(current);
      current = '';
    } else {
      current += character;
    }
  }
  parts.push(current);
  return parts;
}

function unescape(value: string, term: string): string {
  let result = '';
  for (let index = 0; index < value.length; index++) {
    const character = value[index]!;
    if (character !== '\\') {
      result += character;
      continue;
    }
    const next = value[index + 1];
    if (next !== '\\' && next !== ',' && next !== '=') {
      throw new Error(`invalid field selector: '${term}': invalid escape sequence in the value`);
    }
    result += next;
    index++;
  }
  return result;
}

function requirement(term: string): FieldRequirement {
  for (let index = 0; index < term.length; index++) {
    const character = term[index]!;
    if (character === '\\') {
      index++;
      continue;
    }
    const operator = term.startsWith('!=', index) ? '!=' : term.startsWith('==', index) ? '==' : character === '=' ? '=' : undefined;
    if (operator === undefined) continue;
    const field = term.slice(0, index);
    if (field === '') break;
    return { field, operator: operator === '!=' ? '!=' : '=', value: unescape(term.slice(index + operator.length), term) };
  }
  throw new Error(`invalid selector: '${term}'; can't understand '${term}'`);
}

/** Parses a field selector; the empty selector selects everything. Throws an Error naming the term at fault. */
export function parseFieldSelector(text: string): FieldRequirement[] {
  if (text.trim() === '') return [];
  return splitUnescaped(text, ',').map((term) => requirement(term.trim()));
}

/** The field as the server's field set has it: a string, '' when absent. */
function fieldValue(object: KubeObject, field: string): string {
  let value: unknown = object;
  for (const part of field.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return '';
    value = (value as Record<string, unknown>)[part];
  }
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
}

export function matchesFields(requirements: readonly FieldRequirement[], object: KubeObject): boolean {
  return requirements.every(({ field, operator, value }) => (fieldValue(object, field) === value) === (operator === '='));
}
