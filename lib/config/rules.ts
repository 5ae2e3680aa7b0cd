/**
 * The rules a configuration string must follow, each with the words that
 * complete "must be …" in the message for a string that breaks it.
 */
import { isDnsLabel, isDnsSubdomain } from '../kube-syntax/label-selector.ts';

export interface Rule {
  readonly test: (text: string) => boolean;
  /** Completes "must be …". */
  readonly description: string;
}

export const rules = {
  /** Resource and relation names become Mustache path segments (`resources.ingresses`). */
  identifier: {
    test: (text) => /^[a-z][a-zA-Z0-9_]*$/.test(text),
    description: "a lowercase letter followed by letters, digits or '_'",
  },
  partial: { test: (text) => /^[A-Za-z0-9_.-]+$/.test(text), description: "letters, digits, '_', '.' or '-'" },
  /**
   * File names end up in paths on the HAProxy host: no separators, no '.' or
   * '..'. One dot at most, before the extension: the Data Plane API stores
   * any other as '_' (client-native misc/stringutil.go SanitizeFilename), so
   * the configuration would name a file it never has and every deployment
   * would upload it again with a reload.
   */
  fileName: {
    test: (text) => /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)?$/.test(text),
    description: "a letter or digit followed by letters, digits, '_' or '-', and at most one '.' before an extension",
  },
  directory: {
    test: (text) => /^[A-Za-z0-9._-]+$/.test(text) && text !== '.' && text !== '..',
    description: "a single directory name (letters, digits, '_', '.' or '-'; not '.' or '..')",
  },
  absolutePath: {
    test: (text) => text.startsWith('/') && !text.split('/').some((part) => part === '.' || part === '..'),
    description: "an absolute path without '.' or '..' segments",
  },
  apiVersion: {
    test: (text) => {
      const parts = text.split('/');
      const version = parts.at(-1)!;
      return parts.length <= 2 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(version) && (parts.length === 1 || isDnsSubdomain(parts[0]!));
    },
    description: '"v1" or "group/version"',
  },
  kind: { test: (text) => /^[A-Za-z][A-Za-z0-9]*$/.test(text), description: 'a kind such as Ingress' },
  resource: { test: isDnsLabel, description: 'a plural resource name such as ingresses' },
  dnsLabel: { test: isDnsLabel, description: "a DNS label (lowercase letters, digits and '-')" },
  dnsSubdomain: { test: isDnsSubdomain, description: "a DNS subdomain (lowercase letters, digits, '-' and '.')" },
  nonEmpty: { test: (text) => text !== '', description: 'non-empty' },
  /** A Gateway API GatewayController name (apis/v1/shared_types.go): a domain, '/', a path. */
  controllerName: {
    test: (text) => text.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/.test(text),
    description: 'a domain, "/" and a path, such as example.com/gateway-controller',
  },
} satisfies Record<string, Rule>;
