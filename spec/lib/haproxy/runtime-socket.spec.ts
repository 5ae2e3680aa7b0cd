import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runtimeCommand } from '../../../lib/haproxy/runtime-socket.ts';

describe('runtimeCommand', () => {
  it('refuses payloads HAProxy would cut at an empty line, and multi-line commands', async () => {
    const missing = join(tmpdir(), 'no-such-haproxy.sock');
    for (const [command, payload] of [
      ['add map @1 #2', 'a b\n\nc d'],
      ['add map @1 #2', ''],
      ['show info\nshow proc', undefined],
    ] as const) {
      const options = payload === undefined ? {} : { payload };
      const error = await runtimeCommand(missing, command, options).then(
        () => undefined,
        (failure: unknown) => failure as Error,
      );
      expect(error?.message).to.match(/payload|single line/);
    }
  });

  it('times out naming the socket and the command when the answer never comes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'silent-socket-'));
    const path = join(dir, 'silent.sock');
    const silent = createNetServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(path, resolve));
    try {
      const error = await runtimeCommand(path, 'show proc', { timeoutMs: 100 }).then(
        () => undefined,
        (failure: unknown) => failure as Error,
      );
      expect(error?.message).to.equal(`HAProxy socket ${path} did not answer "show proc" within 100 ms`);
    } finally {
      silent.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names the socket and the command when nobody listens', async () => {
    const missing = join(tmpdir(), 'no-such-haproxy.sock');
    const error = await runtimeCommand(missing, 'show proc', { retryForMs: 100 }).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error?.message).to.equal(`HAProxy socket ${missing} is not available (ENOENT) for "show proc"`);
  });
});
