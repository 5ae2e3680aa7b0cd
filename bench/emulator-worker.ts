import { parentPort, workerData } from 'node:worker_threads';
import { startEmulator, type EmulatorOptions, type Exchange } from '../spec/support/dataplane-emulator/index.ts';

/**
 * One emulated Data Plane API instance on a thread of its own: a fleet's
 * instances are separate machines, and sharing the benchmark's event loop
 * would make them queue behind each other and measure that instead of the
 * controller's fan-out. With `record`, it keeps every exchange it answers,
 * for stand-ins that replay them (replayed-instance.ts).
 */
const { pod, record } = workerData as { readonly pod: NonNullable<EmulatorOptions['pod']>; readonly record: boolean };
const exchanges: Exchange[] = [];
const emulator = await startEmulator({ pod, ...(record ? { onExchange: (exchange: Exchange) => exchanges.push(exchange) } : {}) });
parentPort!.on('message', async (message: { type: string }) => {
  if (message.type === 'requests') parentPort!.postMessage({ type: 'requests', count: emulator.requests.count });
  if (message.type === 'exchanges') parentPort!.postMessage({ type: 'exchanges', exchanges });
  if (message.type === 'stop') {
    await emulator.stop();
    parentPort!.postMessage({ type: 'stopped' });
    parentPort!.close();
  }
});
parentPort!.postMessage({ type: 'ready', url: emulator.url, credentials: emulator.credentials });
