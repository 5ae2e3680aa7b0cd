/**
 * Decides how to move a running HAProxy 2.6 from the deployed files to the
 * desired ones: nothing, Runtime API operations, or a reload with the first
 * reason the runtime cannot apply. Whatever the runtime cannot reproduce
 * exactly as a restart from the desired configuration would is a reload: a
 * runtime change that diverges from the configuration file would silently
 * change behaviour at the next reload.
 *
 * Configurations are compared by meaning (plan-sections.ts): a deployed
 * configuration read back from the Data Plane API, regrouped by its parser,
 * is the same configuration as the one that was posted.
 */
import { compareCodeUnits, sameRecord } from '../compare.ts';
import type { RenderedFiles } from '../pipeline/model.ts';
import { parseConfig } from './config-parser.ts';
import type { ParsedConfig, Section } from './config-parser.ts';
import { planCertificates } from './plan-certificates.ts';
import { planMaps } from './plan-maps.ts';
import { defaultsChain, nameSections, sectionsReason, type NamedSections } from './plan-sections.ts';
import { loadedFiles, planServers, type Outcome } from './plan-servers.ts';
import type { Plan, RuntimeOperation } from './plan-types.ts';

const EMPTY: Plan = { kind: 'empty' };

/**
 * How a plan reads a configuration: parsed, its sections named. A planner
 * that plans again and again (sharedPlanner) keeps what it read, so the
 * configuration deployed last, the desired one of the plan before, is not
 * read again.
 */
export interface ConfigReader {
  readonly parse: (text: string) => ParsedConfig;
  readonly named: (config: ParsedConfig) => NamedSections;
}

const READ_AFRESH: ConfigReader = { parse: parseConfig, named: nameSections };

/** Every file of both renders the same. */
export function sameFiles(a: RenderedFiles, b: RenderedFiles): boolean {
  return a === b || (a.config === b.config && sameRecord(a.maps, b.maps) && sameRecord(a.certificates, b.certificates) && sameRecord(a.files, b.files));
}

export function planDeployment(deployed: RenderedFiles, desired: RenderedFiles, reader: ConfigReader = READ_AFRESH): Plan {
  if (sameFiles(deployed, desired)) return EMPTY;
  // Deployed first: a reader that keeps what it read last keeps the desired configuration, the next plan's deployed one.
  const deployedConfig = reader.parse(deployed.config);
  const desiredConfig = reader.parse(desired.config);
  const config = planConfig(deployedConfig, desiredConfig, reader);
  if ('reload' in config) return { kind: 'reload', reason: config.reload };
  const reason =
    addedOrRemovedReason('map file', deployed.maps, desired.maps) ??
    addedOrRemovedReason('certificate', deployed.certificates, desired.certificates) ??
    addedOrRemovedReason('general file', deployed.files, desired.files) ??
    changedGeneralFileReason(deployed.files, desired.files);
  if (reason !== undefined) return { kind: 'reload', reason };
  const operations = [...config.operations, ...planMaps(deployed.maps, desired.maps, desiredConfig), ...planCertificates(deployed.certificates, desired.certificates)];
  return operations.length === 0 ? EMPTY : { kind: 'runtime', operations };
}

function addedOrRemovedReason(what: string, deployed: Readonly<Record<string, string>>, desired: Readonly<Record<string, string>>): string | undefined {
  const added = Object.keys(desired)
    .filter((name) => !Object.hasOwn(deployed, name))
    .sort(compareCodeUnits)[0];
  if (added !== undefined) return `${what} ${added} added`;
  const removed = Object.keys(deployed)
    .filter((name) => !Object.hasOwn(desired, name))
    .sort(compareCodeUnits)[0];
  return removed === undefined ? undefined : `${what} ${removed} removed`;
}

function changedGeneralFileReason(deployed: Readonly<Record<string, string>>, desired: Readonly<Record<string, string>>): string | undefined {
  const changed = Object.keys(desired)
    .filter((name) => deployed[name] !== desired[name])
    .sort(compareCodeUnits)[0];
  return changed === undefined ? undefined : `general file ${changed} changed (general files are read only at start)`;
}

function planConfig(deployedConfig: ParsedConfig, desiredConfig: ParsedConfig, reader: ConfigReader): Outcome {
  const deployed = reader.named(deployedConfig);
  const desired = reader.named(desiredConfig);
  const reason = sectionsReason(deployed, desired);
  if (reason !== undefined) return { reload: reason };
  let loaded: ReadonlySet<string> | undefined;
  const loadedNow = () => (loaded ??= loadedFiles(deployedConfig));
  const backends: { readonly backend: string; readonly operations: readonly RuntimeOperation[] }[] = [];
  for (const after of desired.sections) {
    if (after.section.keyword !== 'backend' && after.section.keyword !== 'listen') continue;
    const before = deployed.byKey.get(after.key)!;
    const beforeDefaults = defaultsChain(deployed, before);
    const afterDefaults = defaultsChain(desired, after);
    // The same text inheriting defaults of the same text: the same servers.
    if (before.section.source === after.section.source && sameSources(beforeDefaults, afterDefaults)) continue;
    const outcome = planServers({ section: before.section, defaults: beforeDefaults }, { section: after.section, defaults: afterDefaults }, loadedNow);
    if ('reload' in outcome) return outcome;
    backends.push({ backend: after.section.name ?? '', operations: outcome.operations });
  }
  // planServers orders by server name; this orders by backend, whatever the order of the sections.
  backends.sort((a, b) => compareCodeUnits(a.backend, b.backend));
  return { operations: backends.flatMap((backend) => backend.operations) };
}

function sameSources(a: readonly Section[], b: readonly Section[]): boolean {
  return a.length === b.length && a.every((section, index) => section.source === b[index]!.source);
}
