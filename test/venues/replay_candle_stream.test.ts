// The candle streams of `make venues-replay` (modelPrices, as bench/scale.ts's streams mode runs the
// service on them): a subscribed market streams the replay's candle of the minute in progress, then,
// once the next minute begins, that minute closed with the values of the replay's REST candle.
import test from 'ava';
import { WebSocket } from 'ws';
import { MINUTE, num } from '../../dev/venues/replay.ts';
import { startOfflineReplay, type OfflineReplay } from '../../dev/venues/offline.ts';
import { serveVenueStreams } from '../../dev/venues/streams.ts';

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
