/**
 * The controller's own Lua script: Gateway API RequestMirror on HAProxy
 * 2.6, which has no mirror of its own (decision record 0013). Written and
 * guarded as the controller's other scripts are (lib/lua/controller-scripts.ts).
 *
 * `http-request lua.mirror <backend> <address>` sends a copy of the
 * request, as the rules before it left it (method, path and query, headers
 * and a body HAProxy holds whole), to `<address>`, the configuration's
 * internal mirror frontend, which hands it to `<backend>`: the backend of
 * the mirror's Service port, whose servers follow the EndpointSlices
 * through the Runtime API. The copy leaves from a task of its own, so the
 * client's request goes on at once and the mirror's answer, its delay or
 * its absence never reach the client. A copy whose body HAProxy does not
 * hold whole (a chunked body, or one larger than its buffer) is not sent:
 * a cut copy would be another request.
 */

/** The script's file name among the general files; no template may render a file of this name. */
export const REQUEST_MIRROR_LUA_FILE = 'haproxy-template-ic-request-mirror.lua';

/** The request header naming the mirror's backend on the way to the internal mirror frontend; never copied from a client. */
const MIRROR_BACKEND_HEADER = 'x-haproxy-template-ic-mirror-backend';

export const REQUEST_MIRROR_LUA = `-- haproxy-template-ic: Gateway API RequestMirror (written by the controller; see docs/adr/0013-request-mirror.md).
-- http-request lua.mirror <backend> <address>: a copy of the request to <address>, for <backend>, from a task of its own.

-- Connection-level headers are the copy's own (its body goes at once: no expect); the backend header is set below,
-- never taken from the client.
local not_copied = {
  ['connection'] = true, ['keep-alive'] = true, ['proxy-connection'] = true, ['te'] = true, ['trailer'] = true,
  ['upgrade'] = true, ['expect'] = true, ['content-length'] = true, ['${MIRROR_BACKEND_HEADER}'] = true,
}

-- Sends the copy and reads the status line, then lets go: the answer is nobody's to wait for.
local function deliver(address, request)
  local socket = core.tcp()
  socket:settimeout(5)
  if socket:connect(address) and socket:send(request) then socket:receive('*l') end
  socket:close()
end

core.register_action('mirror', { 'http-req' }, function(txn, backend, address)
  if txn.f:req_hdr('transfer-encoding') ~= nil then return end
  local body = txn.f:req_body() or ''
  local length = txn.f:req_hdr('content-length')
  if (tonumber(length) or 0) ~= #body then return end
  local lines = { txn.f:method() .. ' ' .. txn.f:pathq() .. ' HTTP/1.1' }
  for name, values in pairs(txn.http:req_get_headers()) do
    if not not_copied[name] then
      for i = 0, #values do lines[#lines + 1] = name .. ': ' .. values[i] end
    end
  end
  if length ~= nil then lines[#lines + 1] = 'content-length: ' .. #body end
  lines[#lines + 1] = '${MIRROR_BACKEND_HEADER}: ' .. backend
  lines[#lines + 1] = 'connection: close'
  local request = table.concat(lines, '\\r\\n') .. '\\r\\n\\r\\n' .. body
  core.register_task(function() deliver(address, request) end)
end, 2)
`;
