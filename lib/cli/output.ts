/** Where a command writes: injected so specs can read what a user would see. */
export interface CommandOutput {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

export const processOutput: CommandOutput = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};
