import { BODY_LIMIT_LUA, BODY_LIMIT_LUA_FILE } from './body-limit.ts';
import { EXTERNAL_AUTH_LUA, EXTERNAL_AUTH_LUA_FILE } from './external-auth.ts';
import { REQUEST_MIRROR_LUA, REQUEST_MIRROR_LUA_FILE } from './request-mirror.ts';

/**
 * The controller's own Lua scripts, by file name among the general files.
 * The renderer writes each one a configuration loads, over any template's
 * file of that name; the directive guard lets `lua-load` name these and no
 * other; the configuration reader refuses a template of these names. So a
 * template can run this code and never its own.
 */
export const CONTROLLER_LUA: ReadonlyMap<string, string> = new Map([
  [REQUEST_MIRROR_LUA_FILE, REQUEST_MIRROR_LUA],
  [BODY_LIMIT_LUA_FILE, BODY_LIMIT_LUA],
  [EXTERNAL_AUTH_LUA_FILE, EXTERNAL_AUTH_LUA],
]);
