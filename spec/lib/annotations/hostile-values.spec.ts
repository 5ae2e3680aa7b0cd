import { expect } from 'chai';
import { unsafeRawReason, unsafeWordReason } from '../../../lib/escape.ts';
import { haproxyFamily } from '../../../lib/annotations/haproxy-family.ts';
import { nginxFamily } from '../../../lib/annotations/nginx-family.ts';
import { readAnnotationSettings } from '../../../lib/annotations/read-settings.ts';
import { hostileString, Random } from '../../support/fuzz-values.ts';

/**
 * Whatever an annotation holds, what reaches the settings cannot add a line
 * or a directive: every string is on one line without `"`, `%` or a
 * backquote, and every string but the free-text ones (header values, the
 * realm, inside double quotes) and the regex ones (pattern, replacement,
 * inside single quotes) is a single safe word. Seeded: a failure names its
 * seed, annotation and value.
 */
const SEEDS = 40;
const FREE_TEXT = /(?:^|\.)(?:value|realm|pattern|replacement)$/;

function strings(value: unknown, path: string, into: [string, string][]): [string, string][] {
  if (typeof value === 'string') into.push([path, value]);
  else if (Array.isArray(value)) value.forEach((item, index) => strings(item, `${path}[${index}]`, into));
  else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) strings(item, path === '' ? key : `${path}.${key}`, into);
  return into;
}

describe('annotation settings from hostile values', () => {
  for (const family of [haproxyFamily, nginxFamily]) {
    for (const name of family.rules.flatMap((rule) => rule.annotations)) {
      const annotation = family.prefix + name;
      it(`${annotation}: nothing that could end a line or a word gets through`, () => {
        for (let seed = 1; seed <= SEEDS; seed++) {
          const value = hostileString(new Random(seed), seed % 2 === 0 ? 'x' : '/');
          const read = readAnnotationSettings({ [annotation]: value }, { namespace: 'shop', tls: true });
          for (const [path, text] of strings({ backend: read.backend, route: read.route }, '', [])) {
            const where = `seed ${seed}: ${annotation}: ${JSON.stringify(value)} -> ${path} = ${JSON.stringify(text)}`;
            expect(unsafeRawReason(text), where).to.equal(undefined);
            expect(/["%`]/.test(text), where).to.equal(false);
            if (!FREE_TEXT.test(path)) expect(unsafeWordReason(text), where).to.equal(undefined);
          }
        }
      });
    }
  }
});
