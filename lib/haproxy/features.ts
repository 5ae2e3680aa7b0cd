/**
 * What the HAProxy binary is built with, read from `haproxy -vv`'s "Feature
 * list" line (`+QUIC -WURFL ...`: a plus for each feature compiled in).
 * HTTP/3 needs `+QUIC` on an SSL library with a QUIC API: Debian's 2.6 is
 * built without QUIC; its 3.0 (trixie) with `+QUIC_OPENSSL_COMPAT`, the
 * compatibility layer that refuses a QUIC bind unless the global
 * `limited-quic` asks for it ("this SSL library does not support the QUIC
 * protocol"); its 3.2 and 3.4 with QUIC on OpenSSL 3.5+ and no compatibility
 * layer. Kept apart from the version: it is a build option, decided from the
 * build itself.
 */
import { execFile } from 'node:child_process';
import { haproxyBinary } from './check.ts';

export interface HaproxyFeatures {
  /** Built with QUIC on its SSL library's own QUIC support: a `quic4@` bind, so HTTP/3, is accepted as is. */
  readonly quic: boolean;
}

const FEATURE_LIST = /^Feature list\s*:(.*)$/m;

/** Reads `haproxy -vv`'s output; an answer without a feature list is an error, never "no features". */
export function parseFeatures(output: string): HaproxyFeatures {
  const match = FEATURE_LIST.exec(output);
  if (!match) throw new Error(`not a "haproxy -vv" answer (no Feature list line): ${JSON.stringify(output.slice(0, 200))}`);
  const enabled = new Set(
    match[1]!
      .trim()
      .split(/\s+/)
      .filter((word) => word.startsWith('+'))
      .map((word) => word.slice(1)),
  );
  return { quic: enabled.has('QUIC') && !enabled.has('QUIC_OPENSSL_COMPAT') };
}

/** The features of `binary`, from its `haproxy -vv`. */
export function readFeatures(binary: string = haproxyBinary()): Promise<HaproxyFeatures> {
  return new Promise<HaproxyFeatures>((resolve, reject) => {
    execFile(binary, ['-vv'], { timeout: 10_000 }, (error, stdout) => {
      if (error) return reject(new Error(`${binary} -vv failed: ${error.message}`));
      try {
        resolve(parseFeatures(stdout));
      } catch (parseError) {
        reject(parseError as Error);
      }
    });
  });
}
