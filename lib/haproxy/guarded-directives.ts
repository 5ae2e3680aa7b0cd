/**
 * Directives a configuration may only use when the controller configuration
 * allows them by name (`allowDirectives`): they run code, change the
 * environment of processes HAProxy starts, or read files outside the base
 * directory. `haproxy -c` itself executes `lua-load` bodies, so they are
 * refused before validation ever runs.
 */
export const guardedDirectives = {
  'lua-load': 'loads and runs Lua code',
  'lua-load-per-thread': 'loads and runs Lua code',
  'lua-prepend-path': 'changes where Lua code is loaded from',
  'ssl-engine': 'loads an OpenSSL engine (native code)',
  'external-check': 'runs external programs as health checks',
  program: 'runs external programs (a program section)',
  setenv: 'changes the environment of HAProxy and the programs it starts',
  presetenv: 'changes the environment of HAProxy and the programs it starts',
  resetenv: 'changes the environment of HAProxy and the programs it starts',
  unsetenv: 'changes the environment of HAProxy and the programs it starts',
  'insecure-fork-wanted': 'lets HAProxy fork processes',
  'insecure-setuid-wanted': 'lets HAProxy run setuid programs',
  'return-file': 'serves the content of a file (http-request return ... file)',
  'files-outside-base': 'reads a file by an absolute path or through ".." (outside the base directory)',
} as const;

export type GuardedDirective = keyof typeof guardedDirectives;

export function isGuardedDirective(name: string): name is GuardedDirective {
  return Object.hasOwn(guardedDirectives, name);
}
