/**
 * What a value from a Kubernetes object may contain where a template puts it.
 *
 * `{{value}}` admits a single safe word: ASCII letters, digits and
 * `- . _ ~ : / @ ! * + = & ?` (enough for host names, paths, addresses,
 * ports and names), at most 1024 characters, not starting with `-` or `!`.
 * That word cannot end its line, start a comment (`#`), open a quote, an
 * environment variable (`$`), a sample expression (`%[`), a log-format
 * variable (`%`), an ACL block (`{ }`) or a converter argument list (`(`,
 * `,`), and is a single key in a map file. `%` is admitted where it means
 * nothing (map files: percent-encoded paths), and written as `%%` where a
 * template asks for it (see SafeWriter). Nothing else is rewritten: a value
 * is either admitted as it is or the object carrying it is excluded.
 *
 * `{{{value}}}` and `{{&value}}` admit anything on one line: no control
 * character (newline, carriage return, NUL...) and at most 1024 characters.
 * Such a value can add words, quotes or a comment to its own line, so
 * templates use it only for values their author controls (templateValues).
 *
 * Inside a `{{#escape.quoted}}` section, every value is written as one
 * double-quoted HAProxy word holding exactly the value: anything on one
 * line is admitted (as for `{{{value}}}`), `\`, `"` and `$` are escaped
 * with a backslash (inside double quotes HAProxy ends the word at `"` and
 * expands `$VAR` and `${VAR}`), so spaces, quotes and `#` stay in the word.
 * `%` follows the `%` rule around it (refused, or doubled inside
 * `{{#escape.logFormat}}`).
 */

/**
 * How `%` in a value is written: refused (it starts a log-format variable
 * in the configuration and in general files, which can be log-format
 * files), admitted (map files, where it means nothing: percent-encoded
 * paths), or doubled (`%%`, inside a `{{#escape.logFormat}}` section).
 */
export type PercentMode = 'refuse' | 'admit' | 'escape';

const maxLength = 1024;
const safeWord = /^[A-Za-z0-9._~:/@!*+=&?-]*$/;
const PERCENT = 37;
/** Control characters, DEL and the Unicode line and paragraph separators. */
function isControl(character: string): boolean {
  const code = character.codePointAt(0)!;
  return code < 0x20 || code === 0x7f || code === 0x2028 || code === 0x2029;
}

function describe(character: string): string {
  const code = character.codePointAt(0)!;
  return code < 0x20 || code === 0x7f || code > 0x7e ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : `"${character}"`;
}

/** The safe-word characters by code, so the check is one table read per character. */
const safeCodes = new Uint8Array(128);
for (let code = 0; code < 128; code++) if (safeWord.test(String.fromCharCode(code))) safeCodes[code] = 1;

const PERCENT_REASON = 'contains "%", which starts a log-format variable in HAProxy (a template writes it as "%%" inside {{#escape.logFormat}})';

/** Why `value` is not a safe word, or undefined when it is; `percent` admits "%" too. */
export function unsafeWordReason(value: string, percent = false): string | undefined {
  if (value.length > maxLength) return `is longer than ${maxLength} characters`;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code === PERCENT && !percent) return PERCENT_REASON;
    if (code >= 128 || (safeCodes[code] === 0 && code !== PERCENT)) return `contains ${describe(String.fromCodePoint(value.codePointAt(i)!))}`;
  }
  const first = value.charCodeAt(0);
  // '-' (45) and '!' (33) lead options and negations.
  if (first === 45 || first === 33) return `starts with "${value[0]}"`;
  return undefined;
}

/** Why `value` cannot be written as a quoted word (see quotedWord); `percent` admits "%". */
export function unsafeQuotedReason(value: string, percent: boolean): string | undefined {
  return unsafeRawReason(value) ?? (!percent && value.includes('%') ? PERCENT_REASON : undefined);
}

/** The double-quoted HAProxy word whose argument is exactly `value` (which must be on one line: see unsafeRawReason). */
export function quotedWord(value: string): string {
  return `"${value.replace(/[\\"$]/g, '\\$&')}"`;
}

/** Why `value` cannot be inserted raw, or undefined when it can. */
export function unsafeRawReason(value: string): string | undefined {
  if (value.length > maxLength) return `is longer than ${maxLength} characters`;
  const control = [...value].find(isControl);
  return control === undefined ? undefined : `contains ${describe(control)}`;
}
