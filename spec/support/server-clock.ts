import { defaultInformerOptions, type InformerOptions } from '../../lib/kube/informer.ts';

/**
 * The informer's clocks for a fake API server started with `timeScale`:
 * client-node's watch timers and the watchdog run that many times faster
 * too, so the controller meets a real server's minutes (its first bookmark
 * a minute into a watch) in the same proportions.
 */
export function informerClocks(timeScale: number): Required<Pick<InformerOptions, 'watchdogMs' | 'timeScale'>> {
  return { watchdogMs: defaultInformerOptions.watchdogMs / timeScale, timeScale };
}
