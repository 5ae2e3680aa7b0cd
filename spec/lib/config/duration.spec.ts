import { expect } from 'chai';
import { parseDuration } from '../../../lib/config/duration.ts';

describe('parseDuration', () => {
  const valid: [string, number][] = [
    ['500ms', 500],
    ['2s', 2_000],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1m30s', 90_000],
    ['1h2m3s4ms', 3_723_004],
    ['1.5s', 1_500],
    ['1.1s', 1_100],
    ['.5s', 500],
    ['0s', 0],
    ['1500us', 1.5],
    ['1500µs', 1.5],
    ['250000ns', 0.25],
  ];
  for (const [text, milliseconds] of valid) {
    it(`reads ${text} as ${milliseconds} ms`, () => {
      expect(parseDuration(text)).to.equal(milliseconds);
    });
  }

  const invalid: [string, string][] = [
    ['', '"" is not a duration: it is empty'],
    ['-1s', '"-1s" is not a duration: negative durations are not allowed'],
    ['10', '"10" is not a duration: missing unit after 10 (one of ns, us, ms, s, m, h)'],
    ['0', 'missing unit after 0'],
    ['1m30', 'missing unit after 30'],
    ['1d', '"1d" is not a duration: unknown unit "d" (one of ns, us, ms, s, m, h)'],
    ['soon', '"soon" is not a duration: expected a number followed by a unit, such as 500ms, 2s or 1m30s'],
    [' 2s', 'expected a number followed by a unit'],
    ['2s ', 'unknown unit "s "'],
    ['+2s', 'expected a number followed by a unit'],
  ];
  for (const [text, message] of invalid) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      expect(() => parseDuration(text)).to.throw(Error, message);
    });
  }
});
