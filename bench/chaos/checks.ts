// What a chaos run verifies once the market has settled, each computed from the stored rows
// independently of the code under test. Every check is one statement, so one snapshot: a tick
// committing meanwhile cannot make two halves of a check disagree.
import type { Sql } from '../../src/db/client.ts';

export interface BarFigures {
  coins: number;
  bars: number;
  /** minutes absent between each coin's first and last bar, summed over coins */
  missing: number;
  /** trading coins (simulated, active, no end of bars) */
  live: number;
  /** trading coins whose newest bar is older than `through` */
  lagging: number;
  newest: Date | null;
}

/**
 * Every coin has every minute from its first bar to its last; every trading coin reaches `through` (a
 * bar start). Trading: a simulated coin still simulated, or (the venues' market) a coin with a venue
 * candle in the five minutes before `through`.
 */
export async function barFigures(sql: Sql, through: Date, market: 'simulated' | 'exchanges' = 'simulated'): Promise<BarFigures> {
  const [row] = await sql<BarFigures[]>`
    with span as (
      select coin_id, min(time) as first, max(time) as last, count(*) as bars from market.coin_bars_1m group by coin_id
    ),
    live as (
      select c.id from market.coins c join market.simulated_coins sc on sc.coin_id = c.id
      where ${market} = 'simulated' and c.status = 'active' and sc.bars_until is null
      union
      select distinct v.coin_id from market.venue_bars_1m v
      where ${market} = 'exchanges' and v.time > ${through}::timestamptz - interval '5 minutes' and v.time <= ${through}
    )
    select (select count(*) from span)::int as coins,
      (select coalesce(sum(bars), 0) from span)::int as bars,
      (select coalesce(sum(extract(epoch from last - first) / 60 + 1 - bars), 0) from span)::int as missing,
      (select count(*) from live)::int as live,
      (select count(*) from live l left join span s on s.coin_id = l.id where s.last is null or s.last < ${through})::int as lagging,
      (select max(last) from span) as newest`;
  return row!;
}

export interface AggregateFigures {
  compared: number;
  mismatched: number;
  /** a few mismatching buckets, for the report */
  examples: string[];
}

const LEVELS = [
  { view: 'market.coin_bars_30m', width: '30 minutes' },
  { view: 'market.coin_bars_1h', width: '1 hour' },
  { view: 'market.coin_bars_1d', width: '1 day' },
] as const;

/**
 * Each continuous aggregate against the same OHLCV recomputed straight from the 1-minute bars,
 * bucket by bucket, over the buckets from each coin's first bar on (older buckets outlive the bars
 * that retention dropped and cannot be recomputed). A bucket on one side only is a mismatch too.
 */
export async function aggregateFigures(sql: Sql): Promise<Record<string, AggregateFigures>> {
  const figures: Record<string, AggregateFigures> = {};
  for (const { view, width } of LEVELS) {
    const rows = await sql<{ compared: number; mismatched: number; examples: string[] | null }[]>`
      with first_bar as (
        select coin_id, time_bucket(${width}::interval, min(time)) as since from market.coin_bars_1m group by coin_id
      ),
      recomputed as (
        select coin_id, time_bucket(${width}::interval, time) as time,
          first(open, time) as open, max(high) as high, min(low) as low, last(close, time) as close,
          sum(volume) as volume, last(marketcap, time) as marketcap
        from market.coin_bars_1m
        group by 1, 2
      ),
      served as (
        select a.coin_id, a.time, a.open, a.high, a.low, a.close, a.volume, a.marketcap
        from ${sql.unsafe(view)} a join first_bar f on f.coin_id = a.coin_id and a.time >= f.since
      ),
      compared as (
        select coalesce(r.coin_id, s.coin_id) as coin_id, coalesce(r.time, s.time) as time,
          (r.coin_id is null or s.coin_id is null
            or (r.open, r.high, r.low, r.close, r.volume, r.marketcap) is distinct from (s.open, s.high, s.low, s.close, s.volume, s.marketcap)) as differs,
          case when r.coin_id is null then 'only in the aggregate' when s.coin_id is null then 'missing from the aggregate'
            else format('served %s/%s/%s/%s/%s, bars give %s/%s/%s/%s/%s', s.open, s.high, s.low, s.close, s.volume, r.open, r.high, r.low, r.close, r.volume)
          end as how
        from recomputed r full join served s on s.coin_id = r.coin_id and s.time = r.time
      )
      select count(*)::int as compared, count(*) filter (where differs)::int as mismatched,
        (array_agg(format('coin %s %s: %s', coin_id, time, how) order by time, coin_id) filter (where differs))[1:5] as examples
      from compared`;
    const row = rows[0]!;
    figures[view] = { compared: row.compared, mismatched: row.mismatched, examples: row.examples ?? [] };
  }
  return figures;
}

export interface AlarmRow {
  id: number;
  coin: string;
  direction: string;
  target: string;
  notification: string;
  status: string;
  /** a final bar reached the target: the alarm must have triggered */
  crossed: boolean;
  /** a bar as served (any version of it, a first build before late candles included) reached the target: the alarm may have triggered */
  served: boolean;
  /** alarm.triggered events recorded for this alarm */
  events: number;
}

/**
 * From now on every version of every minute bar written (insert or update) is kept in
 * chaos.bar_versions, a table of the run's own beside the service's: a minute's index bar is built
 * once the candles its streams heard of are in and again for each late candle (a venue's REST
 * candle, a venue catching up), and the alarms compare each build as it is served. Called before the
 * alarms are created: only bars after an alarm was armed count.
 */
export async function recordBarVersions(sql: Sql): Promise<void> {
  await sql.unsafe(`
    create schema if not exists chaos;
    create table if not exists chaos.bar_versions (
      coin_id int not null, time timestamptz not null, high numeric not null, low numeric not null,
      written_at timestamptz not null default clock_timestamp());
    create index if not exists bar_versions_coin_time on chaos.bar_versions (coin_id, time);
    create or replace function chaos.note_bar_version() returns trigger language plpgsql as $$
    begin
      insert into chaos.bar_versions (coin_id, time, high, low) values (new.coin_id, new.time, new.high, new.low);
      return null;
    end $$;
    drop trigger if exists chaos_bar_versions on market.coin_bars_1m;
    create trigger chaos_bar_versions after insert or update on market.coin_bars_1m
      for each row execute function chaos.note_bar_version();`);
}

/**
 * Every alarm of `owner` with whether it crossed, by the documented rule computed from the bars:
 * a 1-minute bar newer than the one the guard compared when the alarm was armed (armed_through),
 * up to the newest bar the last price refresh saw (coin_state.last_updated), reached the target
 * with its high (above) or low (below); `crossed` by the final bars, `served` by any version of
 * them (recordBarVersions). The current price is the newest bar's close, so it is covered by the
 * same bars.
 */
export async function alarmRows(sql: Sql, owner: string): Promise<AlarmRow[]> {
  return sql<AlarmRow[]>`
    select a.id::int, c.slug as coin, a.direction, a.target::text, a.notification, a.status,
      exists (
        select 1 from market.coin_bars_1m b
        where b.coin_id = a.coin_id and b.time > a.armed_through and b.time <= s.last_updated
          and case a.direction when 'above' then b.high >= a.target else b.low <= a.target end
      ) as crossed,
      exists (
        select 1 from chaos.bar_versions b
        where b.coin_id = a.coin_id and b.time > a.armed_through and b.time <= s.last_updated
          and case a.direction when 'above' then b.high >= a.target else b.low <= a.target end
      ) as served,
      (select count(*) from app.webhook_events e
       where e.owner = a.owner and e.event = 'alarm.triggered' and not e.test and (e.data -> 'alarm' ->> 'id')::bigint = a.id)::int as events
    from app.alarms a
    join market.coins c on c.id = a.coin_id
    join market.coin_state s on s.coin_id = a.coin_id
    where a.owner = ${owner} and a.metric = 'rate'
    order by a.id`;
}

export interface EventRow {
  id: string;
  alarm_id: number;
  deliveries: number;
  succeeded: number;
  pending: number;
}

/** The owner's alarm.triggered events with their deliveries' outcomes. */
export async function eventRows(sql: Sql, owner: string): Promise<EventRow[]> {
  return sql<EventRow[]>`
    select e.id::text, (e.data -> 'alarm' ->> 'id')::int as alarm_id,
      count(d.id)::int as deliveries,
      count(d.id) filter (where d.status = 'succeeded')::int as succeeded,
      count(d.id) filter (where d.status = 'pending')::int as pending
    from app.webhook_events e
    left join app.webhook_deliveries d on d.event_id = e.id
    where e.owner = ${owner} and e.event = 'alarm.triggered' and not e.test
    group by e.id
    order by e.created_at`;
}

export interface EmailRow {
  id: string;
  alarm_id: number;
  status: string;
}

/** The owner's alarm.triggered e-mails (app.email_messages) and how each ended. */
export async function emailRows(sql: Sql, owner: string): Promise<EmailRow[]> {
  return sql<EmailRow[]>`
    select m.id::text, (m.data -> 'alarm' ->> 'id')::int as alarm_id, m.status
    from app.email_messages m
    where m.owner = ${owner} and m.kind = 'alarm.triggered'
    order by m.created_at`;
}

/**
 * Whether the market, the webhooks and the e-mails are at rest: caught up to `through` (the demo
 * market's coverage, or the venues' market's index bars), evaluated, nothing left to deliver or send.
 */
export async function settled(sql: Sql, through: Date, market: 'simulated' | 'exchanges' = 'simulated'): Promise<{ caughtUp: boolean; evaluated: boolean; pendingDeliveries: number }> {
  const [row] = await sql<{ caught_up: boolean; evaluated: boolean; pending: number }[]>`
    select
      case when ${market} = 'simulated'
        then coalesce((select covered_until >= ${through}::timestamptz + interval '1 minute' from market.data_sources where name = 'simulated'), false)
        else coalesce((select max(time) >= ${through} from market.coin_bars_1m), false) end as caught_up,
      not exists (
        select 1 from market.coin_state s
        where s.last_updated < (select max(b.time) from market.coin_bars_1m b where b.coin_id = s.coin_id)
      ) as evaluated,
      (select count(*) from app.webhook_deliveries where status = 'pending')::int
        + (select count(*) from app.email_messages where status = 'pending')::int as pending`;
  return { caughtUp: row!.caught_up, evaluated: row!.evaluated, pendingDeliveries: row!.pending };
}

export interface VenueBarFigures {
  /** venue markets (venue, coin, quote) with candles */
  markets: number;
  candles: number;
  /** of them written from a stream (venue_bars_1m.path) */
  streamed: number;
  /** minutes absent between each venue market's first and last candle, summed */
  missing: number;
  /** a few markets with missing minutes, for the report */
  examples: string[];
}

/** Every venue market has every minute from its first candle to its last (the venues' market: streams, REST fills and polling together). */
export async function venueBarFigures(sql: Sql): Promise<VenueBarFigures> {
  const [row] = await sql<VenueBarFigures[]>`
    with span as (
      select v.exchange_id, v.coin_id, v.quote, min(v.time) as first, max(v.time) as last, count(*) as candles,
        count(*) filter (where v.path = 'stream') as streamed
      from market.venue_bars_1m v group by v.exchange_id, v.coin_id, v.quote
    ),
    gaps as (
      select s.*, (extract(epoch from s.last - s.first) / 60 + 1 - s.candles)::int as missing from span s
    )
    select count(*)::int as markets, coalesce(sum(candles), 0)::int as candles, coalesce(sum(streamed), 0)::int as streamed,
      coalesce(sum(missing), 0)::int as missing,
      coalesce((array_agg(e.slug || ' ' || c.slug || '/' || g.quote || ': ' || g.missing || ' of ' || (g.candles + g.missing) || ' minutes from ' || g.first
        order by g.missing desc) filter (where g.missing > 0))[1:5], '{}') as examples
    from gaps g join market.exchanges e on e.id = g.exchange_id join market.coins c on c.id = g.coin_id`;
  return row!;
}
