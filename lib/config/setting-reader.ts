/**
 * Reads a setting as the schema (schema.ts) declares it: the fields a
 * mapping accepts, a value's type and limits, its default. The messages are
 * the readers' own (readers.ts), so a setting reads alike wherever it is.
 */
import { parseDuration } from './duration.ts';
import { describe, type Path, type Problems } from './problems.ts';
import { readBoolean, readDuration, readInteger, readMatching, readString, withDefault } from './readers.ts';
import type { ScalarSetting, SectionSetting, SettingFields, SettingValue, VariantsSetting } from './schema-types.ts';

/** The fields a mapping of the schema accepts, in the order it declares them. */
export function fieldNames<Fields extends SettingFields>(setting: SectionSetting<Fields> | VariantsSetting<Fields>): (keyof Fields & string)[] {
  return Object.keys(setting.fields);
}

function oneOf(values: readonly string[]): string {
  return values.length === 1 ? values[0]! : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
}

/** The value, or undefined with the problem reported at its path. */
export function readScalar<S extends ScalarSetting>(problems: Problems, setting: S, value: unknown, path: Path): SettingValue<S> | undefined {
  return readAny(problems, setting, value, path) as SettingValue<S> | undefined;
}

function readAny(problems: Problems, setting: ScalarSetting, value: unknown, path: Path): number | boolean | string | undefined {
  switch (setting.kind) {
    case 'integer':
      return readInteger(problems, value, path, setting.min, setting.max);
    case 'boolean':
      return readBoolean(problems, value, path);
    case 'duration':
      return readDuration(problems, value, path, setting.positive);
    case 'string':
      if (setting.values !== undefined) {
        if (typeof value === 'string' && setting.values.includes(value)) return value;
        problems.add(path, `must be ${oneOf(setting.values)}, got ${describe(value)}`);
        return undefined;
      }
      return setting.rule === undefined ? readString(problems, value, path) : readMatching(problems, value, path, setting.rule);
  }
}

type Defaulted = ScalarSetting & { readonly default: number | boolean | string };

/** The default as loaded: a duration in milliseconds. */
export function defaultOf<S extends Defaulted>(setting: S): SettingValue<S> {
  return (setting.kind === 'duration' ? parseDuration(setting.default as string) : setting.default) as SettingValue<S>;
}

/** The value, its default when absent, or its default with the problem reported when invalid. */
export function readSetting<S extends Defaulted>(problems: Problems, setting: S, value: unknown, path: Path): SettingValue<S> {
  return withDefault(value, path, defaultOf(setting), (v, p) => readScalar(problems, setting, v, p));
}
