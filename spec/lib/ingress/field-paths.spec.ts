import { expect } from 'chai';
import { hostField, pathField, ruleField } from '../../../lib/ingress/field-paths.ts';

describe('Ingress field paths', () => {
  it('names rules, their hosts and their paths, for the first indexes (shared) and past them (made)', () => {
    for (const rule of [0, 3, 7, 8, 25]) {
      expect(ruleField(rule)).to.equal(`spec.rules[${rule}]`);
      expect(hostField(rule)).to.equal(`spec.rules[${rule}].host`);
      for (const path of [0, 7, 8, 40]) expect(pathField(rule, path)).to.equal(`spec.rules[${rule}].http.paths[${path}]`);
    }
  });
});
