import { parserTable } from './parser-table.ts';
import { parseBoolean, parseDenyStatus, parseDuration, parseInteger, parseList, parseRedirectCode, parseSeconds, parseSize, accept, refuse } from '../../../lib/annotations/values.ts';

const NOT_A_DURATION = 'not a duration: use a whole number with a unit ms, s, m, h or d (no unit means milliseconds), e.g. "30s"';

describe('annotation value parsers', () => {
  it('parseBoolean: Go strconv.ParseBool spellings', () => {
    parserTable(
      parseBoolean,
      [
        ['true', true],
        ['True', true],
        ['1', true],
        ['false', false],
        ['F', false],
      ],
      [
        ['yes', 'not a boolean: use "true" or "false"'],
        ['', 'not a boolean: use "true" or "false"'],
        [' true', 'not a boolean: use "true" or "false"'],
      ],
    );
  });

  it('parseDuration: haproxy.org time, milliseconds without a unit, zero and overflow refused', () => {
    parserTable(
      parseDuration,
      [
        ['500', 500],
        ['250ms', 250],
        ['5s', 5000],
        ['2m', 120_000],
        ['1h', 3_600_000],
        ['1d', 86_400_000],
      ],
      [
        ['5x', NOT_A_DURATION],
        ['1.5s', NOT_A_DURATION],
        ['-1s', NOT_A_DURATION],
        ['5 s', NOT_A_DURATION],
        ['', NOT_A_DURATION],
        ['0s', 'must be more than 0 (HAProxy reads a zero timeout as no timeout)'],
        ['25d', "is longer than HAProxy's longest timeout, 2147483647 ms (about 24.8 days)"],
      ],
    );
  });

  it('parseSeconds: ingress-nginx timeouts, whole seconds without a unit', () => {
    parserTable(
      parseSeconds,
      [
        ['60', 60_000],
        ['1', 1000],
      ],
      [
        ['60s', 'not a number of seconds: use a whole number without a unit, e.g. "60"'],
        ['1.5', 'not a number of seconds: use a whole number without a unit, e.g. "60"'],
        ['0', 'must be more than 0 (HAProxy reads a zero timeout as no timeout)'],
      ],
    );
  });

  it('parseInteger: digits within the range', () => {
    const parse = (value: string) => parseInteger(value, 1, 100);
    parserTable(
      parse,
      [
        ['1', 1],
        ['100', 100],
      ],
      [
        ['0', 'is out of range: use a number from 1 to 100'],
        ['101', 'is out of range: use a number from 1 to 100'],
        ['1e2', 'not a whole number: use digits only, from 1 to 100'],
        ['-5', 'not a whole number: use digits only, from 1 to 100'],
      ],
    );
  });

  it('parseRedirectCode: the codes HAProxy redirects with', () => {
    parserTable(
      parseRedirectCode,
      [
        ['301', 301],
        ['302', 302],
        ['303', 303],
        ['307', 307],
        ['308', 308],
      ],
      [
        ['300', 'not a status code HAProxy can redirect with: use 301, 302, 303, 307 or 308'],
        ['200', 'not a status code HAProxy can redirect with: use 301, 302, 303, 307 or 308'],
        ['0308', 'not a status code HAProxy can redirect with: use 301, 302, 303, 307 or 308'],
      ],
    );
  });

  it('parseDenyStatus: the codes HAProxy has error pages for', () => {
    const reason = 'not a status code HAProxy can deny with: use one of 200, 400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504';
    parserTable(
      parseDenyStatus,
      [
        ['429', 429],
        ['503', 503],
      ],
      [
        ['418', reason],
        ['abc', reason],
      ],
    );
  });

  it('parseSize: ingress-nginx sizes in powers of 1024, any case', () => {
    parserTable(
      parseSize,
      [
        ['0', 0],
        ['100', 100],
        ['100b', 100],
        ['8k', 8192],
        ['1m', 1_048_576],
        ['1M', 1_048_576],
        ['2g', 2_147_483_648],
      ],
      [
        ['1.5m', 'not a size: use a whole number with an optional unit k, m or g, e.g. "8m"'],
        ['1mb', 'not a size: use a whole number with an optional unit k, m or g, e.g. "8m"'],
        ['m', 'not a size: use a whole number with an optional unit k, m or g, e.g. "8m"'],
        ['999999999999999g', 'is too large'],
      ],
    );
  });

  it("parseList: items trimmed, an empty item refused, the first bad item's reason given", () => {
    const digits = (text: string) => (/^\d+$/.test(text) ? accept(Number(text)) : refuse<number>(`not digits: ${text}`));
    parserTable(
      (value) => parseList(value, digits),
      [
        ['1', [1]],
        [' 1 , 2 ', [1, 2]],
      ],
      [
        ['1,,2', 'has an empty item: separate items with single commas'],
        ['1,', 'has an empty item: separate items with single commas'],
        ['1,x,y', 'not digits: x'],
      ],
    );
  });
});
