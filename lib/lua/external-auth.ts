/**
 * The controller's own Lua action: external authentication (ingress-nginx's
 * auth-url, decision record 0019). HAProxy has no auth_request; this action
 * asks the auth service through HAProxy's own httpclient (core.httpclient,
 * HAProxy 2.6+) and yields while it waits, so the request waits and HAProxy
 * does not. Written and guarded as the controller's other scripts are
 * (lib/lua/controller-scripts.ts).
 *
 * `http-request lua.external-auth <timeout> <url> <method> <signin> <redirect> <headers> <always-cookie>`
 * sends the request's headers (not its body) to `<url>` with the headers
 * ingress-nginx's auth location sets (rootfs/etc/nginx/template/nginx.tmpl,
 * `location = /_external-auth-...`). A 2xx answer lets the request go on,
 * with the auth answer's headers named in `<headers>` (a comma list)
 * replacing the request's own; 401 is answered 401, or a 302 to `<signin>`
 * when there is one; 403 is 403; anything else, no answer within the
 * timeout included, is 500, as nginx's auth_request answers an unexpected
 * status. `<timeout>` bounds each try in milliseconds: the httpclient tries
 * four times (three retries), so a service that never answers is answered
 * 500 after four timeouts. `<signin>` and `<redirect>` may hold the nginx
 * variables of `EXTERNAL_AUTH_VARIABLES`, expanded per request, with
 * each "%" written "%%" by the template's log-format escaping (undone
 * here). `-` stands for an argument not set.
 *
 * `http-request lua.gateway-auth <timeout> <backend> <address> <path> <request-headers> <response-headers>`
 * serves Gateway API's ExternalAuth filter (protocol HTTP,
 * apis/v1/httproute_types.go HTTPExternalAuthFilter). The auth request
 * goes to `<address>`, the configuration's internal external-auth frontend,
 * which hands it to `<backend>`, the auth Service port's backend, whose
 * servers follow the EndpointSlices (the httpclient alone could not resolve
 * a cluster Service). It carries the request's method (one the httpclient
 * cannot send goes as GET, X-Forwarded-Method naming it), `<path>` followed
 * by the request's path and query, its Host and Authorization and the
 * headers of `<request-headers>`, and no body (Content-Length 0), as the
 * filter's http.allowedHeaders says. A 200 lets the request go on with the
 * auth answer's `<response-headers>` (its every header but the connection's
 * and body's own when `-`) replacing the request's own; any other answer is
 * returned to the client as the auth service gave it (a silent one's is
 * HAProxy's 504 from the auth backend); none at all is 500: the filter
 * fails closed within four tries of the timeout, as above. A 5xx or no
 * answer is logged with the time it took.
 */

/** The script's file name among the general files; no template may render a file of this name. */
export const EXTERNAL_AUTH_LUA_FILE = 'haproxy-template-ic-external-auth.lua';

/** The request header naming the auth Service's backend on the way to the internal external-auth frontend; never copied from a client. */
const EXTERNAL_AUTH_BACKEND_HEADER = 'x-haproxy-template-ic-auth-backend';

/** The transaction variable holding the auth answer's Set-Cookie, added to the client's answer by the route's rules. */
const EXTERNAL_AUTH_COOKIE_VAR = 'txn.external_auth_cookie';

/** The nginx variables a sign-in URL or auth-request-redirect may hold, each expanded per request as nginx does. */
export const EXTERNAL_AUTH_VARIABLES: readonly string[] = ['host', 'http_host', 'best_http_host', 'scheme', 'pass_access_scheme', 'request_uri', 'escaped_request_uri'];

export const EXTERNAL_AUTH_LUA = `-- haproxy-template-ic: external authentication (written by the controller; see docs/adr/0019-external-auth.md).
-- http-request lua.external-auth <timeout> <url> <method> <signin> <redirect> <headers> <always-cookie>

-- Not sent to the auth service: the body's and the connection's own headers, the Host (the auth URL's), and what
-- the auth request sets itself (ingress-nginx blanks X-Forwarded-Proto and sets the others).
local not_sent = {
  ['host'] = true, ['content-length'] = true, ['transfer-encoding'] = true, ['connection'] = true,
  ['keep-alive'] = true, ['proxy-connection'] = true, ['te'] = true, ['trailer'] = true, ['upgrade'] = true,
  ['expect'] = true, ['x-forwarded-proto'] = true, ['x-forwarded-for'] = true, ['x-real-ip'] = true,
  ['x-original-url'] = true, ['x-original-method'] = true, ['x-original-uri'] = true, ['x-scheme'] = true,
  ['x-sent-from'] = true, ['x-auth-request-redirect'] = true,
}

-- The methods HAProxy's httpclient can send; another is sent as GET (X-Original-Method names it).
local senders = { GET = 'get', HEAD = 'head', POST = 'post', PUT = 'put', DELETE = 'delete' }

-- nginx's set_escape_uri: everything but letters, digits and "-._~" percent-encoded.
local function escape_uri(text)
  return (text:gsub('[^%w%-%._~]', function(c) return string.format('%%%02X', c:byte()) end))
end

local reasons = { [302] = 'Found', [401] = 'Unauthorized', [403] = 'Forbidden', [500] = 'Internal Server Error' }

local function first(headers, name)
  local values = headers and headers[name]
  return values and values[0]
end

local function elapsed(since)
  local now = core.now()
  return math.floor((now.sec - since.sec) * 1000 + (now.usec - since.usec) / 1000)
end

core.register_action('external-auth', { 'http-req' }, function(txn, timeout, url, method, signin, redirect, names, always)
  local started = core.now()
  local http_host = txn.f:req_hdr('host') or ''
  -- ssl_fc comes to Lua as 0 or 1, and 0 is true in Lua.
  local tls = txn.f:ssl_fc()
  local scheme = (tls == 1 or tls == true) and 'https' or 'http'
  local uri = txn.f:pathq() or '/'
  local verb = txn.f:method()
  local variables = {
    host = (http_host:gsub(':%d*$', '')):lower(), http_host = http_host, best_http_host = http_host, scheme = scheme,
    pass_access_scheme = scheme, request_uri = uri, escaped_request_uri = escape_uri(uri),
  }
  -- The template doubles "%" (a percent-encoded sign-in URL's): undone before the variables are expanded.
  local function expand(text) return ((text:gsub('%%%%', '%%')):gsub('%$([%w_]+)', variables)) end

  local headers = {}
  for name, values in pairs(txn.http:req_get_headers()) do
    if not not_sent[name] then
      local copy = {}
      for i = 0, #values do copy[#copy + 1] = values[i] end
      headers[name] = copy
    end
  end
  headers['x-original-url'] = { scheme .. '://' .. http_host .. uri }
  headers['x-original-method'] = { verb }
  headers['x-sent-from'] = { 'haproxy-template-ic' }
  headers['x-real-ip'] = { txn.f:src() }
  headers['x-forwarded-for'] = { txn.f:src() }
  headers['x-auth-request-redirect'] = { expand(redirect) }
  if method ~= '-' then
    verb = method
    headers['x-original-uri'] = { uri }
    headers['x-scheme'] = { scheme }
  end

  local client = core.httpclient()
  local ok, response = pcall(client[senders[verb] or 'get'], client, { url = url, headers = headers, timeout = tonumber(timeout) })
  local status = ok and response.status or 0
  if status >= 200 and status < 300 then
    for name in names:gmatch('[^,]+') do
      if name ~= '-' then
        txn.http:req_del_header(name)
        local value = first(response.headers, name:lower())
        if value then txn.http:req_set_header(name, value) end
      end
    end
    local cookie = first(response.headers, 'set-cookie')
    if cookie then txn:set_var('${EXTERNAL_AUTH_COOKIE_VAR}', cookie) end
    return
  end

  local reply = txn:reply({ headers = { ['content-type'] = { 'text/plain' }, ['cache-control'] = { 'no-store' } } })
  local cookie = ok and first(response.headers, 'set-cookie')
  if status == 401 and signin ~= '-' then
    reply:set_status(302)
    reply:add_header('location', expand(signin))
    if cookie then reply:add_header('set-cookie', cookie) end
  elseif status == 401 or status == 403 then
    reply:set_status(status)
    local challenge = first(response.headers, 'www-authenticate')
    if status == 401 and challenge then reply:add_header('www-authenticate', challenge) end
    if cookie and always == '1' then reply:add_header('set-cookie', cookie) end
  else
    -- A failed auth service is the operator's to see: logged with what it answered (0: no answer) and how long it took.
    txn:log(core.warning, string.format('external auth %s failed: status %d after %d ms%s', url, status, elapsed(started), ok and '' or (': ' .. tostring(response))))
    reply:set_status(500)
  end
  reply:set_body(reply.status .. ' ' .. reasons[reply.status] .. '\\n')
  txn:done(reply)
end, 7)

-- Gateway API ExternalAuth: neither sent to the auth service nor copied from its answer, being the connection's
-- and the body's own (the auth request has no body).
local framing = {
  ['host'] = true, ['content-length'] = true, ['transfer-encoding'] = true, ['connection'] = true,
  ['keep-alive'] = true, ['proxy-connection'] = true, ['te'] = true, ['trailer'] = true, ['upgrade'] = true,
  ['expect'] = true, ['${EXTERNAL_AUTH_BACKEND_HEADER}'] = true,
}

local function listed(names)
  local set = {}
  if names ~= '-' then for name in names:gmatch('[^,]+') do set[name] = true end end
  return set
end

core.register_action('gateway-auth', { 'http-req' }, function(txn, timeout, backend, address, path, allowed, answered)
  local started = core.now()
  local wanted = listed(allowed)
  wanted['authorization'] = true
  local headers = {}
  for name, values in pairs(txn.http:req_get_headers()) do
    if wanted[name] and not framing[name] then
      local copy = {}
      for i = 0, #values do copy[#copy + 1] = values[i] end
      headers[name] = copy
    end
  end
  local host = txn.f:req_hdr('host') or backend
  local verb = txn.f:method()
  headers['host'] = { host }
  headers['content-length'] = { '0' }
  headers['x-forwarded-method'] = { verb }
  headers['${EXTERNAL_AUTH_BACKEND_HEADER}'] = { backend }
  local prefix = path == '-' and '' or (path:gsub('%%%%', '%%'))
  local client = core.httpclient()
  local ok, response = pcall(client[senders[verb] or 'get'], client, {
    url = 'http://' .. host .. prefix .. (txn.f:pathq() or '/'), dst = address, headers = headers, timeout = tonumber(timeout),
  })
  local status = ok and response.status or 0
  if status == 200 then
    local copied = listed(answered)
    for name, values in pairs(response.headers or {}) do
      if (answered == '-' or copied[name]) and not framing[name] then
        txn.http:req_set_header(name, values[0])
        for i = 1, #values do txn.http:req_add_header(name, values[i]) end
      end
    end
    -- A header the answer lacks is removed, so a client cannot send its own in the auth service's name.
    for name in pairs(copied) do
      if not (response.headers and response.headers[name]) then txn.http:req_del_header(name) end
    end
    return
  end
  if status == 0 or status >= 500 then
    -- A failed auth service is the operator's to see: logged with what it answered (0: no answer) and how long it took.
    txn:log(core.warning, string.format('external auth %s failed: status %d after %d ms%s', backend, status, elapsed(started), ok and '' or (': ' .. tostring(response))))
  end
  if status == 0 then
    local reply = txn:reply({ status = 500, headers = { ['content-type'] = { 'text/plain' }, ['cache-control'] = { 'no-store' } }, body = '500 Internal Server Error\\n' })
    return txn:done(reply)
  end
  local reply = txn:reply({ status = status, body = response.body or '' })
  for name, values in pairs(response.headers or {}) do
    if not framing[name] then
      for i = 0, #values do reply:add_header(name, values[i]) end
    end
  end
  txn:done(reply)
end, 6)
`;
