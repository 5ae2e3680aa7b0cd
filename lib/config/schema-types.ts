/**
 * The kinds of setting the controller configuration schema (schema.ts) is
 * made of. A setting says what a user may write, its default and what it
 * does; the loader reads each one by its kind and takes defaults and limits
 * from it, and the reference (docs/reference/configuration.md) and the JSON
 * Schema are generated from it, so the three cannot disagree.
 */
import type { Rule } from './rules.ts';

interface Documented {
  /** What the setting does, in Markdown; links are relative to docs/reference/, where the reference is. */
  readonly description: string;
  /** A value as the YAML would write it. */
  readonly example?: unknown;
  /** The loader refuses a configuration without it. */
  readonly required?: boolean;
  /** The default when it follows another setting rather than being one value. */
  readonly defaultText?: string;
}

export interface IntegerSetting extends Documented {
  readonly kind: 'integer';
  readonly min: number;
  readonly max?: number;
  readonly default?: number;
}

export interface BooleanSetting extends Documented {
  readonly kind: 'boolean';
  readonly default?: boolean;
}

/** A Go-style duration (`500ms`, `1m30s`), read in milliseconds. */
export interface DurationSetting extends Documented {
  readonly kind: 'duration';
  /** Zero refused: an interval or timeout of zero would be a busy loop or an instant failure. */
  readonly positive?: boolean;
  /** As the YAML writes it. */
  readonly default?: string;
}

export interface StringSetting extends Documented {
  readonly kind: 'string';
  readonly rule?: Rule;
  /** The only values allowed, when there are few. */
  readonly values?: readonly string[];
  readonly default?: string;
}

/** A JSONPath-like key such as `metadata.labels['app.kubernetes.io/name']`. */
export interface PathSetting extends Documented {
  readonly kind: 'path';
}

/** A Mustache template's text; in a cluster also `{fromConfigMap: {name, key}}` or `{fromSecret: {name, key}}`. */
export interface TemplateSetting extends Documented {
  readonly kind: 'template';
}

export interface ListSetting extends Documented {
  readonly kind: 'list';
  readonly item: Setting;
  readonly minItems?: number;
  readonly default?: readonly unknown[];
}

/** A mapping from names the user chooses to settings of one kind. */
export interface NamedSetting extends Documented {
  readonly kind: 'named';
  readonly name: Rule;
  readonly item: Setting;
  readonly minItems?: number;
  readonly default?: Readonly<Record<string, never>>;
}

/** A mapping with fixed keys. */
export interface SectionSetting<Fields extends SettingFields = SettingFields> extends Documented {
  readonly kind: 'section';
  readonly fields: Fields;
}

/** A mapping the loader does not look into (template values, Kubernetes objects). */
export interface MappingSetting extends Documented {
  readonly kind: 'mapping';
  readonly default?: Readonly<Record<string, never>>;
}

/** A mapping whose `type` decides which of `fields` it takes. */
export interface VariantsSetting<Fields extends SettingFields = SettingFields, Type extends string = string> extends Documented {
  readonly kind: 'variants';
  readonly fields: Fields;
  /** By value of `type`: the other fields it takes. */
  readonly variants: Readonly<Record<Type, readonly (keyof Fields & string)[]>>;
}

export type Setting =
  | IntegerSetting
  | BooleanSetting
  | DurationSetting
  | StringSetting
  | PathSetting
  | TemplateSetting
  | ListSetting
  | NamedSetting
  | SectionSetting
  | MappingSetting
  | VariantsSetting;

export type SettingFields = Readonly<Record<string, Setting>>;

/** The settings with one value the loader reads alike wherever they are. */
export type ScalarSetting = IntegerSetting | BooleanSetting | DurationSetting | StringSetting;

/** A setting's value as loaded: durations in milliseconds, a string of a few allowed values as their union. */
export type SettingValue<S extends ScalarSetting> = S extends IntegerSetting | DurationSetting
  ? number
  : S extends BooleanSetting
    ? boolean
    : S extends { readonly values: readonly (infer Value extends string)[] }
      ? Value
      : string;

export function section<const Fields extends SettingFields>(fields: Fields, documented: Documented): SectionSetting<Fields> {
  return { kind: 'section', fields, ...documented };
}

export function variants<const Fields extends SettingFields, const Type extends string>(
  fields: Fields,
  byType: Readonly<Record<Type, readonly (keyof Fields & string)[]>>,
  documented: Documented,
): VariantsSetting<Fields, Type> {
  return { kind: 'variants', fields, variants: byType, ...documented };
}
