import type { KubeObject, ValueSource } from '../pipeline/model.ts';
import { Sourced } from '../pipeline/value-source.ts';
import { describeObject } from '../object-fields/names.ts';
import type { HostEntry, Route, Server } from './types.ts';
import type { RouteSettings } from '../routing/settings.ts';
import type { RoutePolicy } from './route-policies.ts';

/**
 * The object a view-model item was made from. Its label is made only when
 * asked, which is when HAProxy refuses a line (a build makes tens of
 * thousands of these and asks for none).
 */
export class ModelSource implements ValueSource {
  readonly object: KubeObject;
  readonly field: string;
  readonly #kind: string;
  #label: string | undefined;

  constructor(kind: string, object: KubeObject, field: string) {
    this.#kind = kind;
    this.object = object;
    this.field = field;
  }

  get label(): string {
    this.#label ??= describeObject(this.#kind, this.object.metadata.namespace, this.object.metadata.name);
    return this.#label;
  }
}

/** An address of an EndpointSlice, the source of a server line; its field, too, is made only when asked. */
export class EndpointAddressSource implements ValueSource {
  readonly object: KubeObject;
  readonly #endpoint: number;
  readonly #address: number;

  constructor(slice: KubeObject, endpoint: number, address: number) {
    this.object = slice;
    this.#endpoint = endpoint;
    this.#address = address;
  }

  get field(): string {
    return `endpoints[${this.#endpoint}].addresses[${this.#address}]`;
  }

  get label(): string {
    return describeObject('EndpointSlice', this.object.metadata.namespace, this.object.metadata.name);
  }
}

/*
 * The view model's most numerous items, each with the object it came from
 * (a class each: made by the ten thousand, they cost no more than literals).
 */

export class ServerItem extends Sourced implements Server {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  /** Set only for servers with a weight of their own: most have none, and their items have no such field. */
  declare readonly weight?: string;

  constructor(name: string, address: string, port: number, source: ValueSource, weight?: string) {
    super(source);
    this.name = name;
    this.address = address;
    this.port = port;
    if (weight !== undefined) this.weight = weight;
  }
}

export class RouteItem extends Sourced implements Route {
  readonly key: string;
  readonly backend: string;
  readonly policy: string | undefined;
  readonly settings: RouteSettings | undefined;

  constructor(key: string, backend: string, policy: RoutePolicy | undefined, source: ValueSource) {
    super(source);
    this.key = key;
    this.backend = backend;
    this.policy = policy?.key;
    this.settings = policy?.settings;
  }
}

export class HostItem extends Sourced implements HostEntry {
  readonly host: string;
  readonly wildcard: boolean;

  constructor(host: string, wildcard: boolean, source: ValueSource) {
    super(source);
    this.host = host;
    this.wildcard = wildcard;
  }
}
