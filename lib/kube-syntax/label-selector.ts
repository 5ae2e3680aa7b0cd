/**
 * Kubernetes label selectors in their string form (`app=web,tier notin (db)`)
 * and the name rules they rest on. Checking the syntax here turns a typo
 * into a configuration error at load instead of a rejected watch later.
 */

export type LabelRequirement =
  | { readonly key: string; readonly operator: 'exists' | 'doesNotExist' }
  /** `a=b` and `a==b` are `in` with one value, `a!=b` is `notIn`, exactly as Kubernetes evaluates them. */
  | { readonly key: string; readonly operator: 'in' | 'notIn'; readonly values: readonly string[] };

export interface LabelSelector {
  readonly source: string;
  /** Every requirement must hold; none selects everything. */
  readonly requirements: readonly LabelRequirement[];
}

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const labelName = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** An RFC 1123 label: a namespace, a name segment. */
export function isDnsLabel(text: string): boolean {
  return text.length <= 63 && dnsLabel.test(text);
}

/** An RFC 1123 subdomain: dot-separated DNS labels, at most 253 characters. */
export function isDnsSubdomain(text: string): boolean {
  return text.length <= 253 && text.split('.').every((label) => dnsLabel.test(label));
}

const nameRule = "must be at most 63 characters, start and end with a letter or digit, and contain only letters, digits, '-', '_' and '.'";

function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return "it may contain at most one '/'";
  const name = parts.at(-1)!;
  const prefix = parts.length === 2 ? parts[0]! : undefined;
  if (prefix !== undefined && !isDnsSubdomain(prefix)) {
    return `the prefix before '/' must be a DNS subdomain (lowercase letters, digits, '-' and '.')`;
  }
  if (name.length > 63 || !labelName.test(name)) return `the name ${nameRule}`;
  return undefined;
}

/** Why `key` is not a valid label key, or undefined when it is. */
export function checkLabelKey(key: string): string | undefined {
  const problem = labelKeyProblem(key);
  return problem === undefined ? undefined : `invalid label key ${JSON.stringify(key)}: ${problem}`;
}

/** Why `value` is not a valid label value (the empty value is valid), or undefined when it is. */
export function checkLabelValue(value: string): string | undefined {
  if (value === '' || (value.length <= 63 && labelName.test(value))) return undefined;
  return `invalid label value ${JSON.stringify(value)}: it ${nameRule}`;
}

type TokenType = 'identifier' | 'in' | 'notin' | '=' | '==' | '!=' | '!' | '(' | ')' | ',' | 'end';

interface Token {
  readonly type: TokenType;
  readonly text: string;
  /** 1-based, for messages. */
  readonly position: number;
}

/** Kubernetes splits identifiers at whitespace and at these. */
const punctuation = /^(?:!=|==|[=!(),])/;
const identifier = /^[^\s!=(),]+/;

/** `in` and `notin` are keywords wherever they appear, as in Kubernetes' own lexer. */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const rest = text.slice(at);
    const space = /^\s+/.exec(rest)?.[0];
    if (space !== undefined) {
      at += space.length;
      continue;
    }
    const symbol = punctuation.exec(rest)?.[0];
    const word = symbol ?? identifier.exec(rest)![0];
    const type: TokenType = symbol !== undefined ? (symbol as TokenType) : word === 'in' || word === 'notin' ? word : 'identifier';
    tokens.push({ type, text: word, position: at + 1 });
    at += word.length;
  }
  tokens.push({ type: 'end', text: '', position: text.length + 1 });
  return tokens;
}

function describe(token: Token): string {
  return token.type === 'end' ? 'the end' : `${JSON.stringify(token.text)} at ${token.position}`;
}

class SelectorParser {
  readonly #tokens: readonly Token[];
  #next = 0;

  constructor(text: string) {
    this.#tokens = tokenize(text);
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    if (this.#peek().type === 'end') return requirements;
    for (;;) {
      requirements.push(this.#requirement());
      const token = this.#take();
      if (token.type === 'end') return requirements;
      if (token.type !== ',') throw new Error(`expected "," or the end, got ${describe(token)}`);
    }
  }

  #peek(): Token {
    return this.#tokens[this.#next]!;
  }

  #take(): Token {
    const token = this.#peek();
    if (token.type !== 'end') this.#next++;
    return token;
  }

  #key(): string {
    const token = this.#take();
    if (token.type !== 'identifier') throw new Error(`expected a label key, got ${describe(token)}`);
    const problem = checkLabelKey(token.text);
    if (problem !== undefined) throw new Error(problem);
    return token.text;
  }

  /** A value may be empty (`a=`, `a in (x,)`), as Kubernetes accepts. */
  #value(): string {
    if (this.#peek().type !== 'identifier') return '';
    const value = this.#take().text;
    const problem = checkLabelValue(value);
    if (problem !== undefined) throw new Error(problem);
    return value;
  }

  #values(after: string): string[] {
    const open = this.#take();
    if (open.type !== '(') throw new Error(`expected "(" after ${after}, got ${describe(open)}`);
    const values: string[] = [];
    for (;;) {
      values.push(this.#value());
      const token = this.#take();
      if (token.type === ')') return values;
      if (token.type !== ',') throw new Error(`expected "," or ")" in the values of ${after}, got ${describe(token)}`);
    }
  }

  #requirement(): LabelRequirement {
    if (this.#peek().type === '!') {
      this.#take();
      return { key: this.#key(), operator: 'doesNotExist' };
    }
    const key = this.#key();
    const operator = this.#peek();
    switch (operator.type) {
      case ',':
      case 'end':
        return { key, operator: 'exists' };
      case '=':
      case '==':
        this.#take();
        return { key, operator: 'in', values: [this.#value()] };
      case '!=':
        this.#take();
        return { key, operator: 'notIn', values: [this.#value()] };
      case 'in':
      case 'notin':
        this.#take();
        return { key, operator: operator.type === 'in' ? 'in' : 'notIn', values: this.#values(`"${key} ${operator.type}"`) };
      default:
        throw new Error(`expected an operator (=, ==, !=, in, notin) or "," after ${JSON.stringify(key)}, got ${describe(operator)}`);
    }
  }
}

/**
 * Parses a label selector (`a=b`, `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x)`, `a`, `!a`, comma-separated). Throws an Error naming the
 * offending key, value or token; the empty selector selects everything.
 */
export function parseLabelSelector(text: string): LabelSelector {
  return { source: text, requirements: new SelectorParser(text).parse() };
}

/** Whether labels satisfy every requirement; `!=` and `notin` hold for objects without the label, as in Kubernetes. */
export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  return selector.requirements.every((requirement) => {
    const value = labels !== undefined && Object.hasOwn(labels, requirement.key) ? labels[requirement.key] : undefined;
    switch (requirement.operator) {
      case 'exists':
        return value !== undefined;
      case 'doesNotExist':
        return value === undefined;
      case 'in':
        return value !== undefined && requirement.values.includes(value);
      case 'notIn':
        return value === undefined || !requirement.values.includes(value);
    }
  });
}
