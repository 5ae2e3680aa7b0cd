/**
 * Service endpoints: /info, /health, discovery, the configuration version,
 * the raw configuration (§3) and the reloads (§2).
 */
import type { ReleaseFeatures } from './release.ts';
import type { EmulatorContext } from './context.ts';
import { fileChecksum } from './config-store.ts';
import { ApiError, booleanParam, integerParam, json, mediaType, text } from './http-kit.ts';
import type { ApiRequest, ApiResponse } from './http-kit.ts';
import { ReloadFailedError } from './reload-agent.ts';
import type { Router } from './router.ts';
import { runtimeFailure } from './runtime-socket.ts';

const SERVICE = '/v3/services/haproxy';

/** Raw endpoint errors of go-swagger releases (3.0 to 3.3.5) are JSON text sent as text/plain (§3, §8); 3.4 sends application/json. */
class RawError extends ApiError {}

export function registerConfigurationRoutes(router: Router, context: EmulatorContext, startedAt: Date): void {
  const { store, agent } = context;

  router.add('GET', '/v3/info', () => json(200, { api: { version: context.release.version, build_date: startedAt.toISOString() }, system: {} }));

  // DPAPI runs its status command and answers `unknown` without one (v3.3.5 handlers/health.go,
  // haproxy/reload_agent.go status()); the emulator's status command is `show proc`.
  router.add('GET', '/v3/health', async () => {
    if (!context.statusCommand) return json(200, { haproxy: 'unknown' });
    return json(200, { haproxy: (await context.haproxy.tryShowProc()) === undefined ? 'down' : 'up' });
  });

  const discovery = (entries: readonly (readonly [string, string])[]) => () =>
    json(
      200,
      entries.map(([url, title]) => ({ url, title, description: title })),
    );
  router.add('GET', '/v3', discovery([['/services', 'Services']]));
  router.add('GET', '/v3/services', discovery([['/services/haproxy', 'HAProxy service']]));
  router.add(
    'GET',
    SERVICE,
    discovery([
      ['/services/haproxy/configuration', 'Configuration'],
      ['/services/haproxy/runtime', 'Runtime'],
      ['/services/haproxy/storage', 'Storage'],
      ['/services/haproxy/reloads', 'Reloads'],
    ]),
  );
  router.add(
    'GET',
    `${SERVICE}/configuration`,
    discovery([
      ['/services/haproxy/configuration/raw', 'Raw configuration'],
      ['/services/haproxy/configuration/version', 'Configuration version'],
    ]),
  );
  router.add(
    'GET',
    `${SERVICE}/runtime`,
    discovery([
      ['/services/haproxy/runtime/backends', 'Backends'],
      ['/services/haproxy/runtime/maps', 'Maps'],
      ['/services/haproxy/runtime/info', 'Info'],
    ]),
  );
  router.add(
    'GET',
    `${SERVICE}/storage`,
    discovery([
      ['/services/haproxy/storage/maps', 'Map files'],
      ['/services/haproxy/storage/ssl_certificates', 'SSL certificates'],
      ['/services/haproxy/storage/general', 'General files'],
    ]),
  );

  router.add('GET', `${SERVICE}/configuration/version`, () => json(200, store.version));

  router.add('GET', `${SERVICE}/configuration/raw`, async () => {
    const content = await store.read();
    return text(200, content, checksumHeader(content));
  });

  router.add('POST', `${SERVICE}/configuration/raw`, async (request) => {
    try {
      return await postRaw(request, context);
    } catch (error) {
      if (error instanceof ApiError && !(error instanceof RawError)) {
        throw new RawError(error.status, error.message, { code: error.code, headers: error.headers });
      }
      throw error;
    }
  });

  router.add('GET', `${SERVICE}/reloads`, () => json(200, agent.list()));

  router.add('GET', `${SERVICE}/reloads/{id}`, (request) => {
    context.release.checkReloadId(request);
    const id = request.params['id']!;
    const reload = agent.get(id);
    if (reload === undefined) throw new ApiError(404, `Reload with ID ${id} does not exist`);
    return json(200, reload);
  });
}

/** Configuration-Checksum, the file's `# _md5hash=`: none for a file DPAPI has not written yet (§3). */
function checksumHeader(content: string): Record<string, string> {
  const checksum = fileChecksum(content);
  return checksum === '' ? {} : { 'Configuration-Checksum': checksum };
}

/** Whether an error should go out as text/plain JSON, the 3.2 raw endpoints' way. */
export function isRawError(error: unknown): boolean {
  return error instanceof RawError;
}

/** POST /configuration/raw, the cases of §3's table in DPAPI's order. */
async function postRaw(request: ApiRequest, context: EmulatorContext): Promise<ApiResponse> {
  const { store, agent } = context;
  const body = rawBody(request, context.release);
  if (body.length > 0 && !body.includes('\n')) {
    throw new ApiError(400, 'invalid configuration: no newline character found');
  }
  const version = integerParam(request.query, 'version');
  const skipVersion = booleanParam(request.query, 'skip_version');
  const skipReload = booleanParam(request.query, 'skip_reload');
  const onlyValidate = booleanParam(request.query, 'only_validate');
  const forceReload = booleanParam(request.query, 'force_reload');

  if (onlyValidate) {
    await store.validateOnly(body);
    // 202 with the configuration on disk, not the posted one (§3).
    const current = await store.read();
    return text(202, current, checksumHeader(current));
  }

  await store.write(body, { version, skipVersion });
  const written = await store.read();
  const headers = { 'Configuration-Checksum': fileChecksum(written) };
  if (skipReload) {
    const actions = request.headers['x-runtime-actions'];
    if (typeof actions === 'string') await runtimeActions(actions, context);
    return text(201, written, headers);
  }
  if (forceReload) {
    try {
      await agent.forceReload();
    } catch (error) {
      // The file is already written (§2): only the reload failed.
      if (error instanceof ReloadFailedError) throw new ApiError(400, error.message);
      throw error;
    }
    return text(201, written, headers);
  }
  return text(202, written, { ...headers, 'Reload-Id': agent.schedule() });
}

/**
 * The configuration text: text/plain (or no type); 3.2 also accepted a JSON
 * string by accident (§3), 3.4 refuses anything but text/plain.
 */
function rawBody(request: ApiRequest, release: ReleaseFeatures): string {
  const type = mediaType(request);
  const raw = request.body.toString('utf8');
  if (type === '' || type === 'text/plain') return raw;
  if (type === 'application/json' && !release.chiWire) {
    try {
      const value: unknown = JSON.parse(raw);
      if (typeof value === 'string') return value;
    } catch {
      // Falls through to the error below.
    }
    throw new ApiError(400, 'parsing body body from "" failed, because the body is not a JSON string');
  }
  throw new ApiError(415, `unsupported media type ${JSON.stringify(type)}, only [text/plain] are available`);
}

/**
 * X-Runtime-Actions after a skip_reload write (§3): `;`-separated actions,
 * space-separated arguments, unknown actions ignored; a failing one answers
 * 500 `cannot execute <action>: <error>`.
 */
async function runtimeActions(header: string, context: EmulatorContext): Promise<void> {
  const { runtime } = context;
  for (const action of header.split(';')) {
    const words = action.split(' ');
    const name = words[0] ?? '';
    const [a, b, c, d] = [words[1], words[2], words[3], words[4]];
    const needs = (count: number): void => {
      if (words.length <= count) throw new ApiError(500, `cannot execute ${name}: not enough parameters`);
    };
    const integer = (value: string | undefined): number => {
      if (value === undefined || !/^-?\d+$/.test(value)) {
        throw new ApiError(500, `cannot execute ${name}: strconv.ParseInt: parsing ${JSON.stringify(value ?? '')}: invalid syntax`);
      }
      return Number(value);
    };
    let command: string | undefined;
    switch (name) {
      case 'SetFrontendMaxConn':
        needs(2);
        command = `set maxconn frontend ${a} ${integer(b)}`;
        break;
      case 'SetServerWeight':
        needs(3);
        command = `set server ${a}/${b} weight ${c}`;
        break;
      case 'SetServerCheckPort':
        needs(3);
        command = `set server ${a}/${b} check-port ${integer(c)}`;
        break;
      case 'SetServerAddr': {
        needs(4);
        // client-native runtime/servers.go SetServerAddr leaves the port out when it is 0.
        const port = integer(d);
        command = `set server ${a}/${b} addr ${c}${port > 0 ? ` port ${port}` : ''}`;
        break;
      }
      case 'SetServerState':
        needs(3);
        command = `set server ${a}/${b} state ${c}`;
        break;
      case 'EnableAgentCheck':
        needs(2);
        command = `enable agent ${a}/${b}`;
        break;
      case 'DisableAgentCheck':
        needs(2);
        command = `disable agent ${a}/${b}`;
        break;
      case 'SetServerAgentAddr':
        needs(3);
        command = `set server ${a}/${b} agent-addr ${c}`;
        break;
      case 'SetServerAgentSend':
        needs(3);
        command = `set server ${a}/${b} agent-send ${c}`;
        break;
      default:
        // Unknown (and empty) actions are skipped silently, as DPAPI does.
        break;
    }
    if (command === undefined) continue;
    try {
      await runtime.execute(command);
    } catch (error) {
      throw new ApiError(500, `cannot execute ${name}: ${runtimeFailure(error).message}`);
    }
  }
}
