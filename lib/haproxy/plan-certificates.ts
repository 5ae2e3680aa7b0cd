/** Certificates whose content changed: HAProxy 2.6 replaces a loaded one at runtime (`set ssl cert` + `commit ssl cert`). */
import { compareCodeUnits } from '../compare.ts';
import type { RuntimeOperation } from './plan-types.ts';

export function planCertificates(deployed: Readonly<Record<string, string>>, desired: Readonly<Record<string, string>>): RuntimeOperation[] {
  return Object.keys(desired)
    .sort(compareCodeUnits)
    .flatMap((certificate): RuntimeOperation[] => {
      const pem = desired[certificate];
      const old = deployed[certificate];
      if (pem === undefined || old === undefined || old === pem) return [];
      return [{ type: 'updateCertificate', certificate, pem }];
    });
}
