// Reviewed, deliberate departures from the reference contract's documented responses, each with
// its reason. The contract test (test/http/contract.test.ts) fails on any departure not listed here and on
// any entry here that no longer departs, so the list stays exact.
export const DIFFERENCES: Record<string, string> = {
  'getACoinPrice body.data.marketcap: string where the reference declares number': 'The spec: on the price endpoints prices and marketcap are decimal strings (exact in the convert currency).',
  'getPrices body.data[].marketcap: string where the reference declares number': 'The spec: on the price endpoints prices and marketcap are decimal strings (exact in the convert currency).',
  'indicatorSnapshot body.data[].data.value: missing': 'stoch-rsi carries k and d (as its series does): the reference derives the items of data from its first example item (obv), though each indicator has its own data',
  'indicatorSnapshot body.data[].data.value: string where the reference declares integer': 'the spec: price-scale indicator values (sma, vwap, macd, obv) are decimal strings; the reference types the items after its first example item',
  'indicatorSnapshot body.data[].data.window: missing': 'only obv has a comparison window; the other indicators carry their period: the reference derives the items of data from its first example item (obv)',
};

/**
 * Fields this service answers with null where the reference's example shows a value, each with the
 * rule that makes it null (the spec: unknown values are null, never an invented 0).
 */
export const NULLS: Record<string, string> = {
  'getCoinDetail body.data.change_7d': 'Unknown until the coin has a price 7 days old: unknown values are null, never an invented 0 (spec changelog 1.1.1, 1.1.2).',
  'getCoinDetail body.data.change_rank_24h': 'Change ranks exist only between two ranks: a coin unranked a day ago has none.',
  'getCoinDetail body.data.change_rank_7d': 'Change ranks exist only between two ranks: a coin unranked a week ago has none.',
  'getCoinDetail body.data.fully_diluted_valuation': 'Spec: fully_diluted_valuation is null when neither max nor total supply is known.',
  'getCoinDetail body.data.marketcap': 'Spec: marketcap is null for a coin with no circulating supply.',
  'listCoins body.data[].change_7d': 'Unknown until the coin has a price 7 days old (young, untracked or unpriced): unknown values are null, never an invented 0 (spec changelog 1.1.1, 1.1.2).',
  'listCoins body.data[].change_rank_24h': 'Change ranks order the ranked coins only; an unranked coin (untracked: listed without market data, or delisted) in the default list has none.',
  'listCoins body.data[].change_rank_7d': 'Change ranks order the ranked coins only; an unranked coin (untracked: listed without market data, or delisted) in the default list has none.',
  'listCoins body.data[].circulating_supply': 'Unknown circulating supply: the spec nulls marketcap and dominance for a coin with no circulating supply, which is then null itself.',
  'listCoins body.data[].listed_at': 'Known for active coins only: the spec makes status_updated_at the activation timestamp, and for a delisted or untracked coin it is not one.',
  'listCoins body.data[].marketcap': 'Spec: marketcap is null for a coin with no circulating supply.',
  'listCoins body.data[].rank': 'Ranks order the active priced coins; an untracked (no market data) or delisted coin, which the default list shows, has none.',
  'listCoins body.links.next': 'The last page has no next page: null, as the reference itself declares links.prev on the first page.',
  'listExchanges body.data[].change_24h': 'Unknown without a 24h-old volume reading (a venue just seen, or unranked): unknown values are null, never an invented 0 (spec changelog 1.1.1, 1.1.2).',
  'listExchanges body.data[].change_7d': 'Unknown without a 7-day-old volume reading: unknown values are null, never an invented 0 (spec changelog 1.1.1, 1.1.2).',
  'listExchanges body.data[].change_rank_24h': 'Rank changes exist only between two ranks: an unranked venue (inactive or without volume), or one unranked a day ago, has none.',
  'listExchanges body.data[].change_rank_7d': 'Rank changes exist only between two ranks: an unranked venue, or one unranked a week ago, has none.',
  'listExchanges body.data[].last_updated': 'A venue listed in the catalogue with no ticker yet has no update time: unknown values are null.',
  'listExchanges body.data[].rank': "Ranks order the active venues with volume; the spec makes an unranked venue's trust score null, and its rank likewise.",
  'listExchanges body.data[].volume_dominance': "A share of the ranked venues' volume: null for an unranked venue (no volume), as the spec nulls dominance without the figure it is a share of.",
  'listWallets body.links.next': 'The last page has no next page: null, as the reference itself declares links.prev on the first page.',
  'marketHeatmap body.data[].change_7d': 'Unknown until the coin has a price 7 days old: unknown values are null, never an invented 0 (spec changelog 1.1.2); the tile stays, coloured neutral.',
  'topGainers body.data[].change_7d': 'Unknown until the coin has a price 7 days old: unknown values are null, never an invented 0 (spec changelog 1.1.1, 1.1.2); the gainers are chosen on the 24h change.',
  'topGainers body.data[].change_rank_24h': 'Change ranks exist only between two ranks: a coin unranked a day ago has none.',
  'topGainers body.data[].change_rank_7d': 'Change ranks exist only between two ranks: a coin unranked a week ago has none.',
  'topGainers body.data[].circulating_supply': 'Unknown circulating supply: the spec nulls marketcap and dominance for a coin with no circulating supply, which is then null itself.',
  'topGainers body.data[].marketcap': 'Spec: marketcap is null for a coin with no circulating supply.',
  'topGainers body.links.next': 'The last page has no next page: null, as the reference itself declares links.prev on the first page.',
  'trendingCoins body.data[].marketcap': 'Spec: marketcap is null for a coin with no circulating supply (ranked after those with one, it may still trend).',
  'webhookDeliveryLog body.data[].delivered_at': 'unknown values are null: a delivery still pending (or failed) has not been delivered',
  'webhookDeliveryLog body.data[].response_status': 'unknown values are null: no attempt of the delivery has had an HTTP answer yet',
};
