// Reviewed, deliberate departures from the reference contract's documented responses, each with
// its reason. The contract test (contract.test.ts) fails on any departure not listed here and on
// any entry here that no longer departs, so the list stays exact.
export const DIFFERENCES: Record<string, string> = {
  'indicatorSnapshot body.data[].data.value: missing': 'stoch-rsi carries k and d (as its series does): the reference derives the items of data from its first example item (obv), though each indicator has its own data',
  'indicatorSnapshot body.data[].data.value: string where the reference declares integer': 'the spec: price-scale indicator values (sma, vwap, macd, obv) are decimal strings; the reference types the items after its first example item',
  'indicatorSnapshot body.data[].data.window: missing': 'only obv has a comparison window; the other indicators carry their period: the reference derives the items of data from its first example item (obv)',
};

/**
 * Fields this service answers with null where the reference's example shows a value, each with the
 * rule that makes it null (the spec: unknown values are null, never an invented 0).
 */
export const NULLS: Record<string, string> = {};
