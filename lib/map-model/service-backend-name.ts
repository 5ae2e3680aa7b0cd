/**
 * The backend of a Service port: `<namespace>_<service>_<port>` (see
 * backend-names.ts for which port). Joined rather than concatenated, for the
 * reason lib/pipeline/object-key.ts gives: the model keeps a name per route
 * and per backend and looks each up in maps.
 */
export function backendName(namespace: string, service: string, port: string | number): string {
  return [namespace, service, port].join('_');
}
