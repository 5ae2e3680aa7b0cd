import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';

/**
 * The serial number (hex, upper case, as Node reports it) of the certificate
 * a TLS server presents for `servername`: one real handshake on a fresh
 * connection, without verifying the chain (the specs' certificates are their own).
 */
export function servedSerial(host: string, port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, servername, rejectUnauthorized: false }, () => {
      const serial = socket.getPeerCertificate().serialNumber;
      socket.destroy();
      resolve(serial);
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error(`TLS handshake with ${host}:${port} timed out`)));
    socket.on('error', reject);
  });
}

/** A certificate's serial number as Node reports it: what servedSerial compares against. */
export function serialOf(pem: string): string {
  return new X509Certificate(pem).serialNumber;
}
