import { runValidationTests, type AssertionResult } from '../validation/run-tests.ts';
import { loadConfigFile } from './load-config-file.ts';
import type { CommandOutput } from './output.ts';

function table(results: readonly AssertionResult[]): string {
  const rows = [['TEST', 'ASSERTION', 'RESULT', 'DETAIL'], ...results.map((r) => [r.test, r.assertion, r.passed ? 'pass' : 'FAIL', r.detail])];
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell.replaceAll('\n', ' | ')))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `validate`: runs the configuration's validationTests and prints a table; non-zero exit on any failure. */
export async function validateCommand(options: { readonly config: string | undefined }, output: CommandOutput): Promise<number> {
  const loaded = await loadConfigFile(options.config);
  if (!loaded.ok) {
    for (const error of loaded.errors) output.err(`error: ${error}\n`);
    return 1;
  }
  if (loaded.config.validationTests.length === 0) {
    output.err(`error: ${loaded.path} has no validationTests\n`);
    return 1;
  }
  const results = await runValidationTests(loaded.config);
  output.out(`${table(results)}\n`);
  const failed = results.filter((r) => !r.passed).length;
  const tests = new Set(results.map((r) => r.test)).size;
  output.out(`${results.length - failed} passed, ${failed} failed (${results.length} assertions in ${tests} tests)\n`);
  return failed === 0 ? 0 : 1;
}
