// Reviewed, deliberate departures from the reference contract's documented responses, each with
// its reason. The contract test (contract.test.ts) fails on any departure not listed here and on
// any entry here that no longer departs, so the list stays exact.
export const DIFFERENCES: Record<string, string> = {};

/**
 * Fields this service answers with null where the reference's example shows a value, each with the
 * rule that makes it null (the spec: unknown values are null, never an invented 0).
 */
export const NULLS: Record<string, string> = {
  'webhookDeliveryLog body.data[].delivered_at': 'unknown values are null: a delivery still pending (or failed) has not been delivered',
  'webhookDeliveryLog body.data[].response_status': 'unknown values are null: no attempt of the delivery has had an HTTP answer yet',
};
