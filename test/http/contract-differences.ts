// Reviewed, deliberate departures from the reference contract's documented responses, each with
// its reason. The contract test (contract.test.ts) fails on any departure not listed here and on
// any entry here that no longer departs, so the list stays exact.
export const DIFFERENCES: Record<string, string> = {
  'getACoinPrice body.data.marketcap: string where the reference declares number': 'The spec: on the price endpoints prices and marketcap are decimal strings (exact in the convert currency).',
  'getPrices body.data[].marketcap: string where the reference declares number': 'The spec: on the price endpoints prices and marketcap are decimal strings (exact in the convert currency).',
};

/**
 * Fields this service answers with null where the reference's example shows a value, each with the
 * rule that makes it null (the spec: unknown values are null, never an invented 0).
 */
export const NULLS: Record<string, string> = {};
