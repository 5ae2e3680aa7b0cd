/**
 * What it takes to move a running HAProxy from its deployed configuration
 * and files to the desired ones: nothing, runtime operations only (no
 * reload), or a reload, with the reason.
 */

export interface ServerSpec {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  /** Every keyword after the address, as written (e.g. ["check", "weight", "50"]). */
  readonly options: readonly string[];
  readonly weight: number | undefined;
  /** `disabled` on the line puts the server in maintenance. */
  readonly disabled: boolean;
}

/** One line of a map file. */
export type MapEntry = readonly [key: string, value: string];

export type RuntimeOperation =
  | { readonly type: 'addServer'; readonly backend: string; readonly server: ServerSpec }
  | { readonly type: 'deleteServer'; readonly backend: string; readonly server: string }
  | {
      readonly type: 'updateServer';
      readonly backend: string;
      readonly server: string;
      /** Only what changed. */
      readonly address?: string;
      readonly port?: number;
      readonly weight?: number;
      readonly disabled?: boolean;
    }
  | {
      readonly type: 'updateMap';
      /** File name under the maps directory, e.g. `host.map`. */
      readonly map: string;
      /** The whole new content in file order: for an atomic swap. */
      readonly entries: readonly MapEntry[];
      /** The content it replaces, in file order. */
      readonly before: readonly MapEntry[];
      /** Entry-level changes, for APIs that edit one entry at a time (a key's last value counts). */
      readonly added: readonly MapEntry[];
      readonly changed: readonly MapEntry[];
      readonly removed: readonly string[];
      /** Every path the configuration names the file by (HAProxy knows a map by that path). */
      readonly references: readonly string[];
      /**
       * Whether some lookup takes the first match in file order (map_sub,
       * map_reg...), so an entry added at the end of the map is right only
       * where the new content has it at the end.
       */
      readonly ordered: boolean;
    }
  | {
      readonly type: 'updateCertificate';
      /** File name under the certificates directory. */
      readonly certificate: string;
      readonly pem: string;
    };

export type Plan =
  | { readonly kind: 'empty' }
  | { readonly kind: 'runtime'; readonly operations: readonly RuntimeOperation[] }
  | {
      readonly kind: 'reload';
      /** The first difference the runtime cannot apply, for the user (e.g. `backend default_web_80 added`). */
      readonly reason: string;
    };
