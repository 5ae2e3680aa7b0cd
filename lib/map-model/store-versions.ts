import { sameItems } from '../collections/sorted-list.ts';
import type { StoreVersions } from './types.ts';

/** Whether two builds read the same Service, EndpointSlice, Secret and ConfigMap stores' contents: the HTTP part and the layer-4 part keep their results by it. */
export function sameVersions(a: StoreVersions, b: StoreVersions): boolean {
  return a.services === b.services && a.endpointSlices === b.endpointSlices && sameItems(a.secrets, b.secrets) && a.configMaps === b.configMaps;
}
