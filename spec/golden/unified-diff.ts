/**
 * A unified diff of two texts (`diff -u` style, three lines of context),
 * for a golden file that changed: what a reviewer reads in the failure. The
 * texts are a few hundred lines at most, so a longest common subsequence
 * table is quick enough and keeps this free of dependencies.
 */
export function unifiedDiff(expected: string, actual: string, name: string, context = 3): string {
  if (expected === actual) return '';
  const a = expected.split('\n');
  const b = actual.split('\n');
  const edits = editScript(a, b);
  const hunks: string[] = [];
  let i = 0;
  while (i < edits.length) {
    if (edits[i]!.op === ' ') {
      i++;
      continue;
    }
    // A hunk: from `context` lines before this change to `context` lines after the last change closer than twice that.
    const start = Math.max(0, i - context);
    let end = i;
    while (end < edits.length) {
      let next = end;
      while (next < edits.length && edits[next]!.op !== ' ') next++;
      let gap = next;
      while (gap < edits.length && edits[gap]!.op === ' ') gap++;
      if (gap < edits.length && gap - next <= 2 * context) end = gap;
      else {
        end = Math.min(edits.length, next + context);
        break;
      }
    }
    const slice = edits.slice(start, end);
    const first = slice[0]!;
    const fromCount = slice.filter((e) => e.op !== '+').length;
    const toCount = slice.filter((e) => e.op !== '-').length;
    hunks.push(`@@ -${first.a + (fromCount > 0 ? 1 : 0)},${fromCount} +${first.b + (toCount > 0 ? 1 : 0)},${toCount} @@`);
    for (const edit of slice) hunks.push(`${edit.op}${edit.line}`);
    i = end;
  }
  return [`--- expected/${name}`, `+++ actual/${name}`, ...hunks].join('\n');
}

interface Edit {
  readonly op: ' ' | '-' | '+';
  readonly line: string;
  /** Lines of each text before this one. */
  readonly a: number;
  readonly b: number;
}

function editScript(a: readonly string[], b: readonly string[]): Edit[] {
  // common[i][j]: the length of the longest common subsequence of a[i..] and b[j..].
  const common = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      common[i]![j] = a[i] === b[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
    }
  }
  const edits: Edit[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) edits.push({ op: ' ', line: a[i]!, a: i++, b: j++ });
    else if (i < a.length && (j === b.length || common[i + 1]![j]! >= common[i]![j + 1]!)) edits.push({ op: '-', line: a[i]!, a: i++, b: j });
    else edits.push({ op: '+', line: b[j]!, a: i, b: j++ });
  }
  return edits;
}
