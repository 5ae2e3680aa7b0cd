import { createHash } from 'node:crypto';

/** File systems refuse names over 255 bytes; a namespace and a Secret name may together reach 317. */
const maxFileName = 128;

/**
 * The certificate file of a Secret: `<namespace>_<name>.pem`, or, when that
 * is too long, a prefix of it with a hash of the whole, which keeps it
 * unique, deterministic and recognisable.
 */
export function certificateFile(namespace: string, name: string): string {
  // The Data Plane API stores files under names of [A-Za-z0-9_-] plus the extension, turning
  // other characters into '_'; Kubernetes names have no '_', so this stays unique.
  const plain = `${namespace}_${name.replaceAll('.', '_')}.pem`;
  if (plain.length <= maxFileName) return plain;
  const digest = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 16);
  return `${plain.slice(0, maxFileName - digest.length - 6)}-${digest}.pem`;
}
