/**
 * Preloaded (`node --import`) into a controller a spec runs as a process:
 * on SIGUSR2 it throws an exception, or with PLANTED_FAULT=rejection leaves
 * a promise rejection unhandled, outside any stream, as a bug would, for the
 * spec to see what the process does with it.
 */
process.on('SIGUSR2', () => {
  setImmediate(() => {
    if (process.env['PLANTED_FAULT'] === 'rejection') void Promise.reject(new Error('a planted rejection nothing handles'));
    else throw new Error('a planted fault nothing catches');
  });
});
