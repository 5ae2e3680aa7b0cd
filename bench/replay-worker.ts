import { parentPort, workerData } from 'node:worker_threads';
import { AnswerClock } from './answer-clock.ts';
import { startReplayedInstance, type ScriptedAnswer } from './replayed-instance.ts';

/**
 * The stand-in instances of a fleet on one thread of their own, so that the
 * little work they do (read a request, answer it when its time is up) is not
 * charged to the controller's event loop being measured, and one thread, not
 * twenty, competes with it for this machine's cores.
 */
const { script, instances } = workerData as { readonly script: readonly ScriptedAnswer[]; readonly instances: number };
const clock = new AnswerClock();
const replayed = await Promise.all(Array.from({ length: instances }, () => startReplayedInstance(script, clock)));
parentPort!.on('message', async (message: { type: string }) => {
  if (message.type === 'requests') {
    parentPort!.postMessage({
      type: 'requests',
      count: replayed.reduce((sum, instance) => sum + instance.requests(), 0),
      mismatches: replayed.flatMap((instance) => instance.mismatches()),
    });
  }
  if (message.type === 'stop') {
    await Promise.all(replayed.map((instance) => instance.stop()));
    parentPort!.postMessage({ type: 'stopped' });
    parentPort!.close();
  }
});
parentPort!.postMessage({ type: 'ready', urls: replayed.map((instance) => instance.url) });
