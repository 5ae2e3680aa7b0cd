/**
 * Just enough Dockerfile reading for the image specs: instructions (with
 * line continuations joined), the global ARG defaults, and build stages.
 */

export interface Instruction {
  readonly keyword: string;
  /** Everything after the keyword, continuations joined with a space. */
  readonly text: string;
}

export interface Stage {
  readonly name: string | undefined;
  readonly from: string;
  readonly instructions: readonly Instruction[];
}

export interface Dockerfile {
  /** ARGs before the first FROM, with their defaults. */
  readonly globalArgs: Readonly<Record<string, string>>;
  readonly stages: readonly Stage[];
}

function instructions(text: string): Instruction[] {
  const found: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    const whole = `${pending}${line}`.trim();
    pending = '';
    const space = whole.search(/\s/);
    found.push({ keyword: whole.slice(0, space).toUpperCase(), text: whole.slice(space + 1).trim() });
  }
  return found;
}

export function parseDockerfile(text: string): Dockerfile {
  const globalArgs: Record<string, string> = {};
  const stages: { name: string | undefined; from: string; instructions: Instruction[] }[] = [];
  for (const instruction of instructions(text)) {
    if (instruction.keyword === 'FROM') {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.text);
      if (match === null) throw new Error(`cannot read FROM ${instruction.text}`);
      stages.push({ name: match[2], from: match[1]!, instructions: [] });
    } else if (stages.length === 0) {
      if (instruction.keyword !== 'ARG') throw new Error(`${instruction.keyword} before the first FROM`);
      const [name, value = ''] = instruction.text.split('=', 2);
      globalArgs[name!] = value;
    } else {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return { globalArgs, stages };
}

/** An exec-form instruction's argument list (ENTRYPOINT ["a", "b"]). */
export function execForm(instruction: Instruction | undefined): string[] {
  if (instruction === undefined) throw new Error('no such instruction');
  const parsed: unknown = JSON.parse(instruction.text);
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) throw new Error(`${instruction.keyword} is not in exec form`);
  return parsed;
}
