/**
 * Runtime endpoints (§6): commands on the worker's stats socket, no reload,
 * no version change. The changes are real (HAProxy serves them at once) and
 * volatile: the next reload rebuilds everything from the files (§9).
 */
import { rm, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import type { HaproxyCapabilities } from '../../../lib/haproxy/capabilities.ts';
import type { EmulatorContext } from './context.ts';
import { ApiError, booleanParam, empty, enumField, integerField, json, jsonBody, stringField } from './http-kit.ts';
import type { ApiRequest, ApiResponse } from './http-kit.ts';
import type { Router } from './router.ts';
import { answeringErrors, runtimeFailure } from './runtime-socket.ts';
import type { RuntimeSocket } from './runtime-socket.ts';
import { sanitizeStorageName } from './storage-names.ts';

const PREFIX = '/v3/services/haproxy/runtime';

const ADMIN_STATES = ['ready', 'maint', 'drain'] as const;
const OPERATIONAL_STATES = ['up', 'down', 'stopping'] as const;

interface ServerState {
  readonly id: string;
  readonly name: string;
  readonly address: string;
  readonly port: number | undefined;
  readonly admin_state: (typeof ADMIN_STATES)[number];
  readonly operational_state: (typeof OPERATIONAL_STATES)[number];
  readonly weight: number;
}

interface MapInfo {
  readonly id: string;
  readonly file: string;
  readonly description: string;
  readonly storage_name?: string;
}

export function registerRuntimeRoutes(router: Router, context: EmulatorContext): void {
  const { runtime } = context;
  const failing = (handler: (request: ApiRequest) => Promise<ApiResponse>) => answeringErrors(runtimeFailure, handler);
  // Path parameters with the pattern of client-native 7eb6211e are refused before the handler runs (release.ts).
  const checked =
    (params: readonly string[], handler: (request: ApiRequest) => Promise<ApiResponse>) =>
    (request: ApiRequest): Promise<ApiResponse> => {
      context.release.checkPathParams(request, params);
      return failing(handler)(request);
    };

  router.add(
    'GET',
    `${PREFIX}/info`,
    failing(async () => {
      const info = Object.fromEntries(
        (await runtime.execute('show info'))
          .split('\n')
          .map((line) => /^([^:]+): (.*)$/.exec(line))
          .filter((match) => match !== null)
          .map((match) => [match[1]!, match[2]!]),
      );
      const number = (key: string): number | undefined => (info[key] === undefined ? undefined : Number(info[key]));
      return json(200, {
        info: {
          version: info['Version'],
          release_date: info['Release_date'],
          pid: number('Pid'),
          uptime: number('Uptime_sec'),
          nbthread: number('Nbthread'),
          curr_conns: number('CurrConns'),
          max_conn: number('Maxconn'),
          jobs: number('Jobs'),
          stopping: number('Stopping'),
        },
        runtimeAPI: context.paths.toClient(runtime.path),
        error: '',
      });
    }),
  );

  // --- servers -------------------------------------------------------------

  router.add(
    'GET',
    `${PREFIX}/backends/{parent_name}/servers`,
    checked(['parent_name'], async (request) => json(200, (await serverStates(runtime, request.params['parent_name']!)).map(publicServer))),
  );

  router.add(
    'GET',
    `${PREFIX}/backends/{parent_name}/servers/{name}`,
    checked(['parent_name', 'name'], async (request) => {
      const { parent_name: backend, name } = request.params as { parent_name: string; name: string };
      return json(200, publicServer(await oneServer(runtime, backend, name)));
    }),
  );

  router.add(
    'PUT',
    `${PREFIX}/backends/{parent_name}/servers/{name}`,
    checked(['parent_name', 'name'], async (request) => {
      const { parent_name: backend, name } = request.params as { parent_name: string; name: string };
      const body = jsonBody(request);
      const wanted = {
        admin: enumField(body, 'admin_state', ADMIN_STATES),
        operational: enumField(body, 'operational_state', OPERATIONAL_STATES),
        // From 3.3.4 on (handlers/runtime_server.go); earlier releases ignore them (release.ts).
        ...(context.release.runtimeServerFields
          ? { weight: integerField(body, 'weight'), address: stringField(body, 'address'), port: integerField(body, 'port') }
          : { weight: undefined, address: undefined, port: undefined }),
      };
      const current = await oneServer(runtime, backend, name);
      const id = `${backend}/${name}`;
      // 3.4's order, each step only when it changes something, earlier steps undone when a later one fails.
      const undo: string[] = [];
      try {
        if (wanted.operational !== undefined && wanted.operational !== current.operational_state) {
          await runtime.execute(`set server ${id} health ${wanted.operational}`);
          undo.unshift(`set server ${id} health ${current.operational_state}`);
        }
        if (wanted.admin !== undefined && wanted.admin !== current.admin_state) {
          await runtime.execute(`set server ${id} state ${wanted.admin}`);
          undo.unshift(`set server ${id} state ${current.admin_state}`);
        }
        if (wanted.weight !== undefined && wanted.weight !== current.weight) {
          await runtime.execute(`set server ${id} weight ${wanted.weight}`);
          undo.unshift(`set server ${id} weight ${current.weight}`);
        }
        const addressChanged = wanted.address !== undefined && wanted.address !== '' && wanted.address !== current.address;
        const portChanged = wanted.port !== undefined && wanted.port !== current.port;
        if (addressChanged || portChanged) {
          const address = wanted.address || current.address;
          const port = wanted.port ?? current.port;
          await runtime.execute(`set server ${id} addr ${address}${port ? ` port ${port}` : ''}`);
        }
      } catch (error) {
        for (const command of undo) await runtime.execute(command).catch(() => undefined);
        throw error;
      }
      return json(200, publicServer(await oneServer(runtime, backend, name)));
    }),
  );

  router.add(
    'POST',
    `${PREFIX}/backends/{parent_name}/servers`,
    checked(['parent_name'], async (request) => {
      const backend = request.params['parent_name']!;
      const body = jsonBody(request);
      const name = stringField(body, 'name');
      if (name === undefined || name === '') throw new ApiError(400, 'the new server must have a name');
      // Exactly the command DPAPI sends (§6), with its consequences on HAProxy 2.6.12: a server
      // added with `enabled` is marked ready but left out of the load-balancing tree and takes no
      // traffic; a client that wants traffic adds it in maintenance and then makes it ready.
      await runtime.execute(`add server ${backend}/${name}${addServerArguments(body, context.haproxy.capabilities)}`);
      return json(201, body);
    }),
  );

  router.add(
    'DELETE',
    `${PREFIX}/backends/{parent_name}/servers/{name}`,
    checked(['parent_name', 'name'], async (request) => {
      const { parent_name: backend, name } = request.params as { parent_name: string; name: string };
      const current = await oneServer(runtime, backend, name);
      // HAProxy deletes only servers in maintenance (§9).
      if (current.admin_state !== 'maint') await runtime.execute(`disable server ${backend}/${name}`);
      await runtime.execute(`del server ${backend}/${name}`);
      return empty(204);
    }),
  );

  // --- maps ----------------------------------------------------------------

  const resolve = (name: string): string => mapIdentifier(name, context.dirs.maps);
  // HAProxy names a map by this instance's path; the client knows the pod's (pod.ts).
  const shown = (map: MapInfo): MapInfo => ({ ...map, file: context.paths.toClient(map.file) });

  router.add(
    'GET',
    `${PREFIX}/maps`,
    failing(async (request) => {
      const all = booleanParam(request.query, 'include_unmanaged');
      const maps = await listMaps(runtime, context.dirs.maps);
      return json(200, (all ? maps : maps.filter((map) => map.storage_name !== undefined)).map(shown));
    }),
  );

  router.add(
    'GET',
    `${PREFIX}/maps/{name}`,
    checked(['name'], async (request) => {
      // Only the list names the storage file: handlers/map.go GetMapHandlerImpl returns the runtime map as
      // client-native found it (seen on dataplaneapi v3.2.15 and v3.4.2).
      const { storage_name: _listed, ...map } = shown(await findMap(runtime, context.dirs.maps, resolve(request.params['name']!)));
      return json(200, map);
    }),
  );

  router.add(
    'PUT',
    `${PREFIX}/maps/{name}`,
    checked(['name'], async (request) => {
      const map = resolve(request.params['name']!);
      const entries = entryList(request);
      const lines = entries.map((entry) => `${entry.key} ${entry.value}`);
      // The CLI reads one request into tune.bufsize (16 kB): bigger payloads go through a new version (§6).
      if (Buffer.byteLength(lines.join('\n')) <= 8_192) {
        if (lines.length > 0) await runtime.execute(`add map ${map}`, lines.join('\n'));
      } else {
        const prepared = await runtime.execute(`prepare map ${map}`);
        const version = /(\d+)\s*$/.exec(prepared)?.[1];
        if (version === undefined) throw new ApiError(500, `prepare map ${map} answered: ${prepared}`);
        for (const chunk of chunks(lines)) await runtime.execute(`add map @${version} ${map}`, chunk);
        await runtime.execute(`commit map @${version} ${map}`);
      }
      await forceSync(request, runtime, context, map);
      return json(201, entries);
    }),
  );

  router.add(
    'DELETE',
    `${PREFIX}/maps/{name}`,
    checked(['name'], async (request) => {
      const map = resolve(request.params['name']!);
      const found = await findMap(runtime, context.dirs.maps, map);
      await runtime.execute(`clear map ${map}`);
      if (booleanParam(request.query, 'forceDelete')) {
        await rm(onDisk(found.file, context.dirs.base), { force: true });
      } else {
        await forceSync(request, runtime, context, map);
      }
      return empty(204);
    }),
  );

  router.add(
    'GET',
    `${PREFIX}/maps/{parent_name}/entries`,
    checked(['parent_name'], async (request) => json(200, await mapEntries(runtime, resolve(request.params['parent_name']!)))),
  );

  router.add(
    'POST',
    `${PREFIX}/maps/{parent_name}/entries`,
    checked(['parent_name'], async (request) => {
      const map = resolve(request.params['parent_name']!);
      const body = jsonBody(request);
      const key = stringField(body, 'key');
      const value = stringField(body, 'value');
      if (key === undefined || key === '') throw new ApiError(422, 'key in body is required', { code: 602 });
      if (value === undefined) throw new ApiError(422, 'value in body is required', { code: 602 });
      // `get map` first (§6): an existing entry is a 409, as add map alone would accept a duplicate.
      if ((await getEntry(runtime, map, key)) !== undefined) {
        throw new ApiError(409, `object already exists: key ${key} already exists in map ${map}`);
      }
      // As client-native runtime/maps.go AddMapEntry: the key and value go into the command as they are, so the CLI's
      // escapes apply to them (a client must double a backslash it means).
      await runtime.execute(`add map ${map} ${key} ${value}`);
      await forceSync(request, runtime, context, map);
      return json(201, { key, value });
    }),
  );

  router.add(
    'GET',
    `${PREFIX}/maps/{parent_name}/entries/{id}`,
    checked(['parent_name', 'id'], async (request) => {
      const map = resolve(request.params['parent_name']!);
      const key = request.params['id']!;
      const entry = await getEntry(runtime, map, key);
      if (entry === undefined) throw new ApiError(404, `missing object: key ${key} does not exist in map ${map}`);
      return json(200, entry);
    }),
  );

  router.add(
    'PUT',
    `${PREFIX}/maps/{parent_name}/entries/{id}`,
    checked(['parent_name', 'id'], async (request) => {
      const map = resolve(request.params['parent_name']!);
      const key = request.params['id']!;
      const value = stringField(jsonBody(request), 'value');
      if (value === undefined) throw new ApiError(422, 'value in body is required', { code: 602 });
      await runtime.execute(`set map ${map} ${key} ${value}`);
      await forceSync(request, runtime, context, map);
      return json(200, { key, value });
    }),
  );

  router.add(
    'DELETE',
    `${PREFIX}/maps/{parent_name}/entries/{id}`,
    checked(['parent_name', 'id'], async (request) => {
      const map = resolve(request.params['parent_name']!);
      await runtime.execute(`del map ${map} ${request.params['id']!}`);
      await forceSync(request, runtime, context, map);
      return empty(204);
    }),
  );
}

// --- servers ---------------------------------------------------------------

function publicServer(server: ServerState): Record<string, unknown> {
  // The 3.2 runtime_server model: no weight field.
  const { weight: _weight, port, ...rest } = server;
  return port === undefined ? rest : { ...rest, port };
}

/** `show servers state <be>` (format 1, §6), one entry per server. */
async function serverStates(runtime: RuntimeSocket, backend: string): Promise<ServerState[]> {
  const answer = await runtime.execute(`show servers state ${backend}`);
  const servers: ServerState[] = [];
  for (const line of answer.split('\n')) {
    if (line.startsWith('#') || line.trim() === '' || /^\d+$/.test(line.trim())) continue;
    const fields = line.trim().split(/\s+/);
    if (fields.length < 19 || fields[1] !== backend) continue;
    const operational = Number(fields[5]);
    const admin = Number(fields[6]);
    const port = Number(fields[18]);
    servers.push({
      id: fields[2]!,
      name: fields[3]!,
      address: fields[4]!,
      port: Number.isInteger(port) && port > 0 ? port : undefined,
      // Admin bits: FMAINT 0x01, IMAINT 0x02, RMAINT 0x20 → maint; FDRAIN 0x08, IDRAIN 0x10 → drain.
      admin_state: admin & 0x23 ? 'maint' : admin & 0x18 ? 'drain' : 'ready',
      operational_state: operational === 0 ? 'down' : operational === 3 ? 'stopping' : 'up',
      weight: Number(fields[7]),
    });
  }
  return servers;
}

/**
 * One server's state; 404 `no data for <backend>/<server>: not found` for an
 * unknown server or backend (client-native v6.2 runtime/runtime_client.go
 * GetServerState; the answer of dataplaneapi v3.2.15 and v3.4.2, checked).
 */
async function oneServer(runtime: RuntimeSocket, backend: string, name: string): Promise<ServerState> {
  const missing = new ApiError(404, `no data for ${backend}/${name}: not found`);
  const states = await serverStates(runtime, backend).catch((error: unknown) => {
    throw error instanceof ApiError && error.status === 404 ? missing : error;
  });
  const server = states.find((entry) => entry.name === name);
  if (server === undefined) throw missing;
  return server;
}

/** Body fields of runtime_add_server and the `add server` keyword each becomes (DPAPI's SerializeRuntimeAddServer). */
const FLAG_KEYWORDS: readonly (readonly [string, string])[] = [
  ['agent_check', 'agent-check'],
  ['backup', 'backup'],
  ['check', 'check'],
  ['check_send_proxy', 'check-send-proxy'],
  ['check_ssl', 'check-ssl'],
  ['check_via_socks4', 'check-via-socks4'],
  ['force_sslv3', 'force-sslv3'],
  ['force_tlsv10', 'force-tlsv10'],
  ['force_tlsv11', 'force-tlsv11'],
  ['force_tlsv12', 'force-tlsv12'],
  ['force_tlsv13', 'force-tlsv13'],
  ['no_sslv3', 'no-sslv3'],
  ['no_tlsv10', 'no-tlsv10'],
  ['no_tlsv11', 'no-tlsv11'],
  ['no_tlsv12', 'no-tlsv12'],
  ['no_tlsv13', 'no-tlsv13'],
  ['send_proxy', 'send-proxy'],
  ['send_proxy_v2', 'send-proxy-v2'],
  ['send_proxy_v2_ssl', 'send-proxy-v2-ssl'],
  ['send_proxy_v2_ssl_cn', 'send-proxy-v2-ssl-cn'],
  ['ssl', 'ssl'],
  ['tfo', 'tfo'],
  ['tls_tickets', 'tls-tickets'],
];
const VALUE_KEYWORDS: readonly (readonly [string, string])[] = [
  ['agent_addr', 'agent-addr'],
  ['agent_send', 'agent-send'],
  ['alpn', 'alpn'],
  ['ssl_cafile', 'ca-file'],
  ['check_alpn', 'check-alpn'],
  ['health_check_address', 'addr'],
  ['check_proto', 'check-proto'],
  ['check_sni', 'check-sni'],
  ['ciphers', 'ciphers'],
  ['ciphersuites', 'ciphersuites'],
  ['crl_file', 'crl-file'],
  ['ssl_certificate', 'crt'],
  ['id', 'id'],
  ['observe', 'observe'],
  ['on_error', 'on-error'],
  ['on_marked_down', 'on-marked-down'],
  ['on_marked_up', 'on-marked-up'],
  ['proto', 'proto'],
  ['sni', 'sni'],
  ['source', 'source'],
  ['ssl_max_ver', 'ssl-max-ver'],
  ['ssl_min_ver', 'ssl-min-ver'],
  ['track', 'track'],
  ['verify', 'verify'],
  ['verifyhost', 'verifyhost'],
  ['ws', 'ws'],
];
const INTEGER_KEYWORDS: readonly (readonly [string, string])[] = [
  ['agent_port', 'agent-port'],
  ['agent_inter', 'agent-inter'],
  ['health_check_port', 'port'],
  ['downinter', 'downinter'],
  ['error_limit', 'error-limit'],
  ['fall', 'fall'],
  ['fastinter', 'fastinter'],
  ['inter', 'inter'],
  ['maxconn', 'maxconn'],
  ['maxqueue', 'maxqueue'],
  ['minconn', 'minconn'],
  ['pool_low_conn', 'pool-low-conn'],
  ['pool_max_conn', 'pool-max-conn'],
  ['pool_purge_delay', 'pool-purge-delay'],
  ['rise', 'rise'],
  ['slowstart', 'slowstart'],
  ['weight', 'weight'],
];

/** ` <addr>[:port] <keywords>` of `add server` for a runtime_add_server body (§6). */
function addServerArguments(raw: Record<string, unknown>, haproxy: Pick<HaproxyCapabilities, 'dynamicServerEnabledKeyword'>): string {
  // The model mixes `-` and `_` in field names: both spellings are read.
  const body = Object.fromEntries(Object.entries(raw).map(([key, value]) => [key.replaceAll('-', '_'), value]));
  const words: string[] = [];
  const address = stringField(body, 'address') ?? '';
  const port = integerField(body, 'port');
  words.push(port === undefined ? address : `${address}:${port}`);
  for (const [field, keyword] of FLAG_KEYWORDS) if (body[field] === 'enabled') words.push(keyword);
  for (const [field, keyword] of VALUE_KEYWORDS) {
    const value = stringField(body, field);
    if (value !== undefined && value !== '') words.push(keyword, value);
  }
  for (const [field, keyword] of INTEGER_KEYWORDS) {
    const value = integerField(body, field);
    if (value !== undefined) words.push(keyword, String(value));
  }
  if (body['allow_0rtt'] === true) words.push('allow-0rtt');
  if (body['ssl_reuse'] === 'disabled') words.push('no-ssl-reuse');
  if (body['tls_tickets'] === 'disabled') words.push('no-tls-tickets');
  // SerializeRuntimeAddServer (v3.2.15 handlers/runtime_server.go, v3.4.2
  // handlers/runtime/servers/servers.go): maintenance "enabled" is the `disabled` keyword; "disabled"
  // appends `enabled` only when HAProxy is older than 3.0, which refuses it for dynamic servers.
  if (body['maintenance'] === 'enabled') words.push('disabled');
  if (body['maintenance'] === 'disabled' && haproxy.dynamicServerEnabledKeyword) words.push('enabled');
  const proxyOptions = body['proxy_v2_options'];
  if (Array.isArray(proxyOptions) && proxyOptions.length > 0) words.push('proxy-v2-options', proxyOptions.join(','));
  return ` ${words.join(' ')}`;
}

// --- maps ------------------------------------------------------------------

/**
 * DPAPI's GetMapsPath (§6): `#<id>` passes through; any other name is
 * sanitised, gets `.map` when it has another extension, and is joined to
 * maps_dir. HAProxy knows a map by the name the configuration used, so a map
 * the configuration names otherwise (a relative path) is reachable only as
 * `#<id>` (`%23<id>` in the URL).
 */
export function mapIdentifier(name: string, mapsDir: string): string {
  if (name.startsWith('#')) return name;
  let file = sanitizeStorageName(name);
  if (!file.endsWith('.map')) file = `${file}.map`;
  return join(mapsDir, file);
}

async function listMaps(runtime: RuntimeSocket, mapsDir: string): Promise<MapInfo[]> {
  const maps: MapInfo[] = [];
  for (const line of (await runtime.execute('show map')).split('\n')) {
    const match = /^(\d+) \((.*?)\) ?(.*)$/.exec(line.trim());
    if (match === null) continue;
    const file = match[2]!;
    const inside = relative(mapsDir, file);
    const managed = isAbsolute(file) && inside !== '' && !inside.startsWith('..') && !isAbsolute(inside);
    maps.push({
      id: match[1]!,
      file,
      description: match[3]!.trim(),
      ...(managed ? { storage_name: inside } : {}),
    });
  }
  return maps;
}

async function findMap(runtime: RuntimeSocket, mapsDir: string, identifier: string): Promise<MapInfo> {
  const maps = await listMaps(runtime, mapsDir);
  const found = identifier.startsWith('#') ? maps.find((map) => map.id === identifier.slice(1)) : maps.find((map) => map.file === identifier);
  if (found === undefined) throw new ApiError(404, `missing object: runtime map ${identifier} does not exist`);
  return found;
}

/** `show map <f>`: `[{id:"0x…", key, value}]`. */
async function mapEntries(runtime: RuntimeSocket, map: string): Promise<{ id: string; key: string; value: string }[]> {
  const entries: { id: string; key: string; value: string }[] = [];
  for (const line of (await runtime.execute(`show map ${map}`)).split('\n')) {
    const match = /^(0x[0-9a-f]+) (\S+) ?(.*)$/.exec(line);
    if (match !== null) entries.push({ id: match[1]!, key: match[2]!, value: match[3]! });
  }
  return entries;
}

/**
 * `get map <f> <key>`: the entry with exactly this key, undefined when there
 * is none. `get map` runs the map's match method, so on a map_beg, map_sub,
 * map_dom or map_reg map it finds an entry whose pattern matches the key;
 * client-native's GetMapEntry keeps the answer only when the key it returns
 * is the key asked for (and the value is not empty), as here: without that
 * a new `/live` in a map_beg map holding `/` would be a false 409.
 */
async function getEntry(runtime: RuntimeSocket, map: string, key: string): Promise<{ key: string; value: string } | undefined> {
  const answer = await runtime.execute(`get map ${map} ${key}`);
  if (!/\bfound=yes\b/.test(answer)) return undefined;
  const quoted = (name: string): string | undefined => new RegExp(`\\b${name}="((?:[^"\\\\]|\\\\.)*)"`).exec(answer)?.[1];
  const found = { key: quoted('key') ?? '', value: quoted('value') ?? '' };
  return found.key === key && found.value !== '' ? found : undefined;
}

function entryList(request: ApiRequest): { key: string; value: string }[] {
  let value: unknown;
  try {
    value = JSON.parse(request.body.toString('utf8'));
  } catch (error) {
    throw new ApiError(400, `parsing body body from "" failed, because ${(error as Error).message}`);
  }
  if (!Array.isArray(value)) throw new ApiError(400, 'parsing body body from "" failed, because the body is not an array');
  return value.map((item: unknown) => {
    const entry = (item ?? {}) as Record<string, unknown>;
    if (typeof entry['key'] !== 'string' || typeof entry['value'] !== 'string') {
      throw new ApiError(422, 'key and value in body are required', { code: 602 });
    }
    return { key: entry['key'], value: entry['value'] };
  });
}

/** Lines in payload chunks below HAProxy's request buffer. */
function chunks(lines: readonly string[]): string[] {
  const result: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const line of lines) {
    const bytes = Buffer.byteLength(line) + 1;
    if (current.length > 0 && size + bytes > 8_000) {
      result.push(current.join('\n'));
      current = [];
      size = 0;
    }
    current.push(line);
    size += bytes;
  }
  if (current.length > 0) result.push(current.join('\n'));
  return result;
}

/** A map file as HAProxy names it, on disk: relative names resolve against the base directory (`default-path origin`). */
function onDisk(file: string, baseDir: string): string {
  return isAbsolute(file) ? file : join(baseDir, file);
}

/** `force_sync=true` (§6): the file is rewritten from the runtime entries, sorted by key. */
async function forceSync(request: ApiRequest, runtime: RuntimeSocket, context: EmulatorContext, map: string): Promise<void> {
  if (!booleanParam(request.query, 'force_sync')) return;
  const found = await findMap(runtime, context.dirs.maps, map);
  const entries = await mapEntries(runtime, map);
  entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  await writeFile(onDisk(found.file, context.dirs.base), entries.map((entry) => `${entry.key} ${entry.value}\n`).join(''));
}
