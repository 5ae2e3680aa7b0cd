/**
 * Resolves on the first SIGINT or SIGTERM and keeps handling both until the
 * process exits: Ctrl-C under `npm run` reaches the process twice (from the
 * terminal and forwarded by npm), and the second must not kill it before it
 * has stopped HAProxy.
 */
export function terminationRequested(onRepeat: () => void = () => undefined): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let requested = false;
    const handle = (signal: NodeJS.Signals) => {
      if (requested) return onRepeat();
      requested = true;
      resolve(signal);
    };
    process.on('SIGINT', handle);
    process.on('SIGTERM', handle);
  });
}
