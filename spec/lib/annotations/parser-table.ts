import { expect } from 'chai';
import type { Parsed } from '../../../lib/annotations/values.ts';

/** Checks each valid value against what it must parse to, and each invalid one against the exact reason it must give. */
export function parserTable<T>(parse: (value: string) => Parsed<T>, valid: readonly [string, T][], invalid: readonly [string, string][]): void {
  for (const [value, expected] of valid) expect(parse(value), JSON.stringify(value)).to.deep.equal({ ok: true, value: expected });
  for (const [value, reason] of invalid) expect(parse(value), JSON.stringify(value)).to.deep.equal({ ok: false, reason });
}
