/** A share of the requests, `share` of every `of`, in lowest terms: what `rand(of) lt share` in the configuration reads. */
export interface Share {
  readonly share: number;
  readonly of: number;
}

export function inLowestTerms(share: number, of: number): Share {
  const divisor = greatestCommonDivisor(share, of);
  return { share: share / divisor, of: of / divisor };
}

function greatestCommonDivisor(a: number, b: number): number {
  return b === 0 ? a : greatestCommonDivisor(b, a % b);
}
