/**
 * Go-style durations (`500ms`, `1m30s`, `1.5s`), the notation Kubernetes
 * users already write in manifests and controller flags.
 */

const nanosPerUnit: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['µs', 1_000n], // U+00B5 MICRO SIGN, as Go accepts
  ['μs', 1_000n], // U+03BC GREEK SMALL LETTER MU, as Go accepts
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const units = 'ns, us, ms, s, m, h';

/**
 * Counting in integer nanoseconds, as Go does, keeps `1.1s` at exactly
 * 1100 ms where floating-point multiplication would not.
 */
function componentNanos(number: string, unitNanos: bigint): bigint {
  const [whole = '', fraction = ''] = number.split('.');
  const wholeNanos = BigInt(whole || '0') * unitNanos;
  if (fraction === '') return wholeNanos;
  return wholeNanos + (BigInt(fraction) * unitNanos) / 10n ** BigInt(fraction.length);
}

/**
 * Parses a duration such as `500ms`, `2s`, `1m30s` or `1.5h` into
 * milliseconds (fractional below a millisecond). Unlike Go, a bare number
 * (even `0`) is rejected: a unit-less value is more likely a mistake than
 * a deliberate zero.
 */
export function parseDuration(text: string): number {
  const fail = (reason: string): never => {
    throw new Error(`${JSON.stringify(text)} is not a duration: ${reason}`);
  };
  if (text === '') fail('it is empty');
  if (text.startsWith('-')) fail('negative durations are not allowed');
  // A decimal number (`1`, `1.5`, `.5`, `1.`) and whatever follows it up to the next number.
  const component = /(\d+(?:\.\d*)?|\.\d+)([^\d.]*)/y;
  let nanos = 0n;
  while (component.lastIndex < text.length) {
    const match = component.exec(text) ?? fail('expected a number followed by a unit, such as 500ms, 2s or 1m30s');
    const [, number = '', unit = ''] = match;
    if (unit === '') fail(`missing unit after ${number} (one of ${units})`);
    const unitNanos = nanosPerUnit.get(unit) ?? fail(`unknown unit ${JSON.stringify(unit)} (one of ${units})`);
    nanos += componentNanos(number, unitNanos);
  }
  const milliseconds = Number(nanos) / 1e6;
  if (!Number.isFinite(milliseconds)) fail('it is too long');
  return milliseconds;
}
