import { parentPort, workerData } from 'node:worker_threads';
import { startEmulator } from '../spec/support/dataplane-emulator/index.ts';

/**
 * One emulated Data Plane API instance on a thread of its own: a fleet's
 * instances are separate machines, and sharing the benchmark's event loop
 * would make them queue behind each other and measure that instead of the
 * controller's fan-out.
 */
const emulator = await startEmulator(workerData as Parameters<typeof startEmulator>[0]);
parentPort!.on('message', async (message: { type: string }) => {
  if (message.type === 'requests') parentPort!.postMessage({ type: 'requests', count: emulator.requests.matching(undefined).length });
  if (message.type === 'stop') {
    await emulator.stop();
    parentPort!.postMessage({ type: 'stopped' });
    parentPort!.close();
  }
});
parentPort!.postMessage({ type: 'ready', url: emulator.url, credentials: emulator.credentials });
