/**
 * Directives a configuration may only use when the controller configuration
 * allows them by name (`allowDirectives`): they run code, load native code,
 * change the environment of processes HAProxy starts, read files outside the
 * base directory, or take words from the environment. `haproxy -c` itself
 * executes `lua-load` bodies and reads every file named, so they are refused
 * before validation ever runs.
 */
export const guardedDirectives = {
  'lua-load': 'loads and runs Lua code',
  'lua-load-per-thread': 'loads and runs Lua code',
  'lua-prepend-path': 'changes where Lua code is loaded from',
  'ssl-engine': 'loads an OpenSSL engine (native code)',
  'ssl-provider': 'loads an OpenSSL provider (native code)',
  'ssl-provider-path': 'changes where OpenSSL providers (native code) are loaded from',
  'external-check': 'runs external programs as health checks',
  program: 'runs external programs (a program section)',
  setenv: 'changes the environment of HAProxy and the programs it starts',
  presetenv: 'changes the environment of HAProxy and the programs it starts',
  resetenv: 'changes the environment of HAProxy and the programs it starts',
  unsetenv: 'changes the environment of HAProxy and the programs it starts',
  'insecure-fork-wanted': 'lets HAProxy fork processes',
  'insecure-setuid-wanted': 'lets HAProxy run setuid programs',
  'set-dumpable': 'lets HAProxy write core dumps holding its private keys',
  'return-file': 'serves the content of a file (return, deny, tarpit or http-error with file, lf-file or errorfile)',
  'files-outside-base': 'reads or writes a file by an absolute path, through ".." or a variable (outside the base directory)',
  'environment-variables': 'takes a value from an environment variable ("${NAME}"), which validation runs without',
} as const;

export type GuardedDirective = keyof typeof guardedDirectives;

export function isGuardedDirective(name: string): name is GuardedDirective {
  return Object.hasOwn(guardedDirectives, name);
}
