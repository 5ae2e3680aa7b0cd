import { expect } from 'chai';
import type { RenderedFiles } from '../../lib/pipeline/model.ts';
import { contentHash } from '../../lib/pipeline/content-hash.ts';

describe('contentHash', () => {
  const base: RenderedFiles = { config: 'global\n', maps: { 'a.map': 'x y\n', 'b.map': '' }, certificates: {}, files: {} };

  it('is equal for equal content whatever the key order', () => {
    const reordered = { files: {}, certificates: {}, maps: { 'b.map': '', 'a.map': 'x y\n' }, config: 'global\n' };
    expect(contentHash(reordered)).to.equal(contentHash(base));
  });

  it('differs when any file, name or kind differs', () => {
    const variants: RenderedFiles[] = [
      { ...base, config: 'global \n' },
      { ...base, maps: { 'a.map': 'x y\n', 'c.map': '' } },
      { ...base, maps: { 'a.map': 'x y\n' }, files: { 'b.map': '' } },
      { ...base, maps: { 'a.map': 'x y\n', 'b.map': 'z' } },
    ];
    const hashes = new Set([contentHash(base), ...variants.map(contentHash)]);
    expect(hashes.size).to.equal(variants.length + 1);
  });

  it('cannot be fooled by content that mimics the encoding boundaries', () => {
    const a = { ...base, maps: { a: 'b\u0000c' } };
    const b = { ...base, maps: { 'a\u0000b': 'c' } };
    expect(contentHash(a)).to.not.equal(contentHash(b));
  });
});
