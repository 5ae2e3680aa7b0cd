/**
 * Pod isolation for tests (EmulatorOptions.pod): NOT a Data Plane API
 * feature. The controller renders one configuration for every HAProxy pod of
 * a fleet, written for the pod's layout (a base directory such as
 * /etc/haproxy, a stats socket such as /var/run/haproxy/admin.sock, wildcard
 * binds on fixed ports). In a cluster every pod has its own filesystem and
 * network namespace; emulated instances share one host, so each one hands
 * HAProxy the configuration with the pod's paths turned into its own and
 * wildcard binds narrowed to its own loopback address (127.0.0.2, 127.0.0.3,
 * ...: all of 127/8 is loopback on Linux).
 *
 * The rewrite is one way, on purpose: the API keeps and returns the text as
 * posted (§3), as a real pod's DPAPI does with its own paths.
 */
import { isIP } from 'node:net';
import { isAbsolute, relative } from 'node:path';

export interface PodLayout {
  /** The base directory of the pod's layout (`default-path origin`, maps/, ssl/, general/), e.g. /etc/haproxy. */
  readonly baseDir: string;
  /** The stats socket the pod's configuration declares, e.g. /var/run/haproxy/admin.sock. */
  readonly statsSocket: string;
  /** The address that stands for the pod's network namespace: wildcard binds listen there, e.g. 127.0.0.2. */
  readonly address: string;
}

export interface OwnPaths {
  readonly baseDir: string;
  readonly statsSocket: string;
}

/** The interface the endpoint modules use; the identity outside pod mode. */
export interface PathView {
  /** A configuration text as HAProxy of this instance must see it. */
  toHAProxy(text: string): string;
  /** A path of this instance as the client knows it (a file under the base directory → under the pod's). */
  toClient(path: string): string;
}

export const IDENTITY: PathView = {
  toHAProxy: (text) => text,
  toClient: (path) => path,
};

/** Characters that continue a path on either side: a match must not be part of a longer path. */
const PATH_CHAR = String.raw`[\w.~-]`;

// `bind *:N`, `bind :N`, `bind 0.0.0.0:N`, `bind [::]:N`, `bind :::N` (N may be a range), with an optional family prefix.
const WILDCARD_ADDRESS = /^(?:(?:ipv4|ipv6|tcp|tcp4|tcp6)@)?(?:\*|0\.0\.0\.0|\[::\]|::)?:(\d+(?:-\d+)?)$/;
const BIND_LINE = /^(\s*bind\s+)(\S+)(.*)$/;

export class PodMapping implements PathView {
  readonly pod: PodLayout;
  readonly #own: OwnPaths;
  readonly #podBase: string;
  readonly #paths: RegExp;

  constructor(pod: PodLayout, own: OwnPaths) {
    checkPodLayout(pod);
    this.pod = pod;
    this.#own = own;
    this.#podBase = pod.baseDir.replace(/\/+$/, '');
    // Longer first: a socket inside the base directory becomes the instance's socket, not a file moved along.
    const alternatives = [pod.statsSocket, this.#podBase].sort((a, b) => b.length - a.length).map(escape);
    this.#paths = new RegExp(`(?<!${PATH_CHAR}|/)(${alternatives.join('|')})(?!${PATH_CHAR})`, 'g');
  }

  toHAProxy(text: string): string {
    return text
      .split('\n')
      .map((line) => this.#bind(line).replace(this.#paths, (path) => this.#ownPath(path)))
      .join('\n');
  }

  toClient(path: string): string {
    // Relative names (a map the configuration names relative to default-path) are the client's own already.
    if (!isAbsolute(path)) return path;
    if (path === this.#own.statsSocket) return this.pod.statsSocket;
    const inside = relative(this.#own.baseDir, path);
    if (inside === '') return this.#podBase;
    if (inside.startsWith('..') || isAbsolute(inside)) return path;
    return `${this.#podBase}/${inside}`;
  }

  #ownPath(path: string): string {
    return path === this.pod.statsSocket ? this.#own.statsSocket : this.#own.baseDir;
  }

  /** `bind <wildcard>:N[,...]` → `bind <pod.address>:N[,...]`; other addresses stay. */
  #bind(line: string): string {
    const match = BIND_LINE.exec(line);
    if (match === null) return line;
    const addresses = match[2]!.split(',').map((address) => {
      const wildcard = WILDCARD_ADDRESS.exec(address);
      return wildcard === null ? address : `${this.pod.address}:${wildcard[1]!}`;
    });
    return `${match[1]!}${addresses.join(',')}${match[3]!}`;
  }
}

/** Throws a TypeError when the layout cannot be mapped. */
export function checkPodLayout(pod: PodLayout): void {
  if (!isAbsolute(pod.baseDir) || pod.baseDir.replace(/\/+$/, '') === '') {
    throw new TypeError(`pod.baseDir must be an absolute directory other than /, got ${JSON.stringify(pod.baseDir)}`);
  }
  if (!isAbsolute(pod.statsSocket)) {
    throw new TypeError(`pod.statsSocket must be an absolute path, got ${JSON.stringify(pod.statsSocket)}`);
  }
  if (isIP(pod.address) === 0) throw new TypeError(`pod.address must be an IP address, got ${JSON.stringify(pod.address)}`);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
