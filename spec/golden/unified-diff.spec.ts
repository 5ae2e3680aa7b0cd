import { expect } from 'chai';
import { goldenDiff } from './golden-case.ts';
import { unifiedDiff } from './unified-diff.ts';

describe('golden diffs', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n', 'x')).to.equal('');
  });

  it('shows a changed line with three lines of context, as diff -u does', () => {
    const before = ['1', '2', '3', '4', '5', '6', '7', '8', '9', ''].join('\n');
    const after = before.replace('5', 'five');
    expect(unifiedDiff(before, after, 'haproxy.cfg')).to.equal(
      ['--- expected/haproxy.cfg', '+++ actual/haproxy.cfg', '@@ -2,7 +2,7 @@', ' 2', ' 3', ' 4', '-5', '+five', ' 6', ' 7', ' 8'].join('\n'),
    );
  });

  it('makes two hunks of changes far apart, one of changes close together', () => {
    const lines = Array.from({ length: 30 }, (_, i) => String(i));
    const far = [...lines];
    far[2] = 'x';
    far[25] = 'y';
    expect(unifiedDiff(lines.join('\n'), far.join('\n'), 'f').match(/^@@/gm)).to.have.length(2);
    const close = [...lines];
    close[2] = 'x';
    close[8] = 'y';
    expect(unifiedDiff(lines.join('\n'), close.join('\n'), 'f').match(/^@@/gm)).to.have.length(1);
  });

  it('shows added and removed lines', () => {
    expect(unifiedDiff('a\nc\n', 'a\nb\nc\n', 'm')).to.include('\n a\n+b\n c');
    expect(unifiedDiff('a\nb\nc\n', 'a\nc\n', 'm')).to.include('\n a\n-b\n c');
  });

  it('names files that are new, missing or changed', () => {
    const expected = new Map([
      ['haproxy.cfg', 'global\n'],
      ['maps/host.map', 'a a\n'],
    ]);
    const actual = new Map([
      ['haproxy.cfg', 'global\n  maxconn 10\n'],
      ['maps/path-exact.map', 'a/ b\n'],
    ]);
    const diff = goldenDiff(expected, actual);
    expect(diff).to.include('+++ actual/haproxy.cfg\n@@ -1,2 +1,3 @@\n global\n+  maxconn 10\n');
    expect(diff).to.include('missing file maps/host.map');
    expect(diff).to.include('new file maps/path-exact.map');
    expect(goldenDiff(expected, expected)).to.equal('');
  });
});
