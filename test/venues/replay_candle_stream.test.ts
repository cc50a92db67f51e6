// The candle streams of `make venues-replay` (modelPrices, as bench/scale.ts's streams mode runs the
// service on them): a subscribed market streams the replay's candle of the minute in progress, then,
// once the next minute begins, that minute closed with the values of the replay's REST candle; a
// Coinbase market (no candle channel) streams its market_trades, live, whose minutes make that candle.
import test from 'ava';
import { WebSocket } from 'ws';
import { MINUTE, num } from '../../dev/venues/replay.ts';
import { startOfflineReplay, type OfflineReplay } from '../../dev/venues/offline.ts';
import { serveVenueStreams } from '../../dev/venues/streams.ts';
import { candleFromTrades, type TradeInput } from '../../src/sources/stream/candles.ts';

const M = Math.floor(Date.now() / MINUTE) * MINUTE - 10 * MINUTE;
let clock = M + 20_000;
let offline: OfflineReplay;
test.before(async () => {
  offline = await startOfflineReplay({ coins: 30, now: () => clock });
});
test.after.always(async () => {
  await offline?.replay.close();
});

interface Kline { e: string; s: string; k: { t: number; o: string; h: string; l: string; c: string; v: string; x: boolean } }

test('a binance kline_1m subscription: the minute in progress, then the minute closed as the replay\'s REST candle of it', async (t) => {
  const { replay } = offline;
  const streams = serveVenueStreams(replay, { intervalMs: 100, modelPrices: true });
  const market = replay.market('binance', 'BTC/USDT')!;
  const ws = new WebSocket(`${replay.url.replace('http', 'ws')}/binance/ws`);
  const klines: Kline['k'][] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', () => ws.send(JSON.stringify({ method: 'SUBSCRIBE', params: [`${market.id.toLowerCase()}@kline_1m`], id: 1 })));
      ws.on('message', (raw) => {
        const message = JSON.parse(String(raw)) as Kline;
        if (message.e !== 'kline') return;
        klines.push(message.k);
        // the minute in progress seen: the next one begins
        if (klines.length === 1) clock = M + MINUTE + 1_000;
        if (message.k.x) resolve();
      });
    });
    const [open, closed] = [klines[0]!, klines.find((k) => k.x)!];
    t.is(open.t, M);
    t.false(open.x);
    const rest = replay.model.minute(market, M, M + MINUTE)!;
    t.is(closed.t, M);
    t.deepEqual([closed.o, closed.h, closed.l, closed.c, closed.v], [num(rest.o), num(rest.h), num(rest.l), num(rest.c), num(rest.v)]);
    t.true(Number(open.v) < Number(closed.v), 'the volume of the minute in progress is part of the closed minute\'s');
    // and the minute now in progress after it
    t.true(klines.some((k) => k.t === M + MINUTE && !k.x) || (await new Promise<boolean>((resolve) => ws.once('message', (raw) => resolve((JSON.parse(String(raw)) as Kline).k?.t === M + MINUTE)))));
  } finally {
    ws.terminate();
    streams.close();
  }
});

interface MarketTrades { channel: string; events: { trades: { trade_id: string; price: string; size: string; time: string }[] }[] }

test.serial('a coinbase market_trades subscription: the trades of each minute, as they are made, make the replay\'s REST candle of it', async (t) => {
  const { replay } = offline;
  const streams = serveVenueStreams(replay, { intervalMs: 100, modelPrices: true });
  const market = replay.market('coinbase', 'BTC/USD')!;
  const N = M + 3 * MINUTE;
  clock = N + 1_000;
  const ws = new WebSocket(`${replay.url.replace('http', 'ws')}/coinbase`);
  /** each trade received, with the clock when it came */
  const received: (TradeInput & { at: number })[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', () => ws.send(JSON.stringify({ type: 'subscribe', product_ids: [market.id], channel: 'market_trades' })));
      ws.on('message', (raw) => {
        const message = JSON.parse(String(raw)) as MarketTrades;
        if (message.channel === 'subscriptions') resolve();
        if (message.channel !== 'market_trades') return;
        for (const trade of message.events.flatMap((event) => event.trades)) received.push({ id: trade.trade_id, timestamp: Date.parse(trade.time), price: trade.price, amount: trade.size, at: clock });
      });
    });
    // minute N from its start (a trade at +5 s), part of it, then what remains of it at N+1's start, then all of N+1 at once
    for (const to of [N + 1_000, N + 30_000, N + MINUTE + 200, N + 2 * MINUTE + 200]) {
      clock = to;
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    for (const minute of [N, N + MINUTE]) {
      const rest = replay.model.minute(market, minute, minute + MINUTE)!;
      t.deepEqual(candleFromTrades(minute, received)?.slice(1), [num(rest.o), num(rest.h), num(rest.l), num(rest.c), num(rest.v)], `minute ${(minute - N) / MINUTE}`);
    }
    t.is(new Set(received.map((trade) => trade.id)).size, received.length, 'no trade twice');
    t.true(received.every((trade) => trade.timestamp <= trade.at && trade.at <= Math.floor(trade.timestamp / MINUTE) * MINUTE + MINUTE + 1_000), 'each trade sent once made, at the latest as the next minute begins');
    t.true(received.some((trade) => trade.timestamp < N + MINUTE && trade.at === N + 30_000), 'minute N\'s first trades while it is in progress');
  } finally {
    ws.terminate();
    streams.close();
    clock = M + 20_000;
  }
});
