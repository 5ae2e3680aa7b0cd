/**
 * The controller's own Lua filter: a route's request body limit (nginx's
 * proxy-body-size, as client_max_body_size answers it) for bodies without a
 * Content-Length: chunked HTTP/1.1 and HTTP/2 without the header. A body
 * with one is judged by a rule on the header before anything is sent; a
 * body without one can only be counted as it passes, and HAProxy holds no
 * more of it than a buffer (tune.bufsize, 16 KiB), so no rule can see its
 * size.
 *
 * `filter lua.body-limit` counts the body of a request whose
 * `txn.body_limit` variable the route's rules set. Past the limit, nothing
 * more goes to the server: the rest is read and dropped, and once the
 * client has sent the whole body it is answered 413 (answered earlier,
 * while the client still sends, the kernel would reset the connection over
 * the unread data and the client would never read the 413). The server has
 * by then been sent the headers and the body's first bytes up to the
 * limit, and its connection is closed without the rest: a cut request
 * never completes. Tried on HAProxy 2.6, 3.2 and 3.4 (the Lua filter API
 * of doc/lua-api/index.rst: register_data_filter, HTTPMessage input,
 * remove and eom, txn:done with a reply).
 */

/** The script's file name among the general files; no template may render a file of this name. */
export const BODY_LIMIT_LUA_FILE = 'haproxy-template-ic-body-limit.lua';

export const BODY_LIMIT_LUA = `-- haproxy-template-ic: request body limits for bodies without a Content-Length (written by the controller;
-- see lib/lua/body-limit.ts). filter lua.body-limit counts the body of a request with var(txn.body_limit).

local BodyLimit = { id = 'haproxy-template-ic body limit', flags = filter.FLT_CFG_FL_HTX }
BodyLimit.__index = BodyLimit

function BodyLimit:new()
  return setmetatable({ seen = 0 }, BodyLimit)
end

function BodyLimit:start_analyze(txn, chn)
  if not chn:is_resp() then filter.register_data_filter(self, chn) end
end

-- After the request's rules: a request without the variable is not counted.
function BodyLimit:http_headers(txn, msg)
  if msg.channel:is_resp() then return filter.CONTINUE end
  self.limit = tonumber(txn:get_var('txn.body_limit'))
  if self.limit == nil then filter.unregister_data_filter(self, msg.channel) end
  return filter.CONTINUE
end

-- Past the limit the data is dropped, not forwarded, until the whole body is read; then 413.
function BodyLimit:http_payload(txn, msg)
  local length = msg:input()
  self.seen = self.seen + length
  if self.seen <= self.limit then return length end
  msg:remove(0, length)
  if msg:eom() then
    txn:done(txn:reply({ status = 413, headers = { ['content-type'] = { 'text/plain' } }, body = '413 Request Entity Too Large\\n' }))
  end
  return 0
end

core.register_filter('body-limit', BodyLimit, function(limit) return limit end)
`;
