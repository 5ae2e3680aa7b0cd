/**
 * A MicroTime as the API server takes it (Event eventTime, Lease renewTime):
 * RFC 3339 with exactly six fractional digits, where a Date's ISO string has
 * three (client-node's V1MicroTime wrote the same).
 */
export function microTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, -1)}000Z`;
}
