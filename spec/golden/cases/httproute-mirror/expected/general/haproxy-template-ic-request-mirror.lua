-- haproxy-template-ic: Gateway API RequestMirror (written by the controller; see docs/adr/0013-request-mirror.md).
-- http-request lua.mirror <backend> <address>: a copy of the request to <address>, for <backend>, from a task of its own.

-- Connection-level headers are the copy's own (its body goes at once: no expect); the backend header is set below,
-- never taken from the client.
local not_copied = {
  ['connection'] = true, ['keep-alive'] = true, ['proxy-connection'] = true, ['te'] = true, ['trailer'] = true,
  ['upgrade'] = true, ['expect'] = true, ['content-length'] = true, ['x-haproxy-template-ic-mirror-backend'] = true,
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
  lines[#lines + 1] = 'x-haproxy-template-ic-mirror-backend: ' .. backend
  lines[#lines + 1] = 'connection: close'
  local request = table.concat(lines, '\r\n') .. '\r\n\r\n' .. body
  core.register_task(function() deliver(address, request) end)
end, 2)
