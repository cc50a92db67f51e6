-- OKX liquidation orders as ccxt parsed them (decimal strings) become rows of the feed; the venue's
-- own identity of an order (instrument and millisecond) de-duplicates repeated polls.

-- why: each poll overlaps the previous one; a liquidation seen twice is written once
create or replace function market.ingest_okx_liquidations(p_rows jsonb)
returns table (inserted int, earliest timestamptz)
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_bad text;
begin
  create temporary table liquidation_rows on commit drop as
  select x.* from jsonb_to_recordset(p_rows) as x (symbol text, "instId" text, ts text, price text, contracts text, "contractSize" text, side text);

  select coalesce(r."instId", '?') || ' ' || coalesce(r.ts, '?') into v_bad from liquidation_rows r
  where r."instId" !~ '^[A-Za-z0-9$.\-]{1,60}$' or r.ts !~ '^\d{10,16}$' or r.side not in ('buy', 'sell')
    or r.price !~ '^\d+(\.\d+)?$' or r.contracts !~ '^\d+(\.\d+)?$' or coalesce(r."contractSize", '1') !~ '^\d+(\.\d+)?$'
    or r.price::numeric <= 0 or r.contracts::numeric <= 0
  limit 1;
  if v_bad is not null then
    raise exception 'malformed liquidation from okx: %', v_bad using errcode = '22P02';
  end if;

  with parsed as (
    select to_timestamp(r.ts::numeric / 1000) as time, r."instId" as symbol, m.base_coin_id as coin_id,
      -- a filled sell closes a long position, a buy a short one
      case r.side when 'sell' then 'long' else 'short' end as position, r.side as "order",
      -- the contract size as ccxt read it with the answer, else as the venue's instruments list gave it
      r.price::numeric as price, trim_scale(r.contracts::numeric * coalesce(r."contractSize"::numeric, m.contract_size, 1)) as quantity,
      market.usd_rate(m.quote, m.quote_coin_id) as rate
    from liquidation_rows r
    left join market.exchanges e on e.slug = 'okx'
    left join market.venue_markets m on m.exchange_id = e.id and m.symbol = r.symbol
  ),
  written as (
    insert into market.liquidations (time, exchange, symbol, coin_id, instrument, position, "order", price, quantity, value_usd, source)
    select p.time, 'okx', p.symbol, p.coin_id, 'swap', p.position, p."order", p.price, p.quantity,
      -- USDT and USDC margined swaps: the quote's USD rate, else taken at par
      round(p.price * p.quantity * coalesce(p.rate, 1), 2), 'okx-liquidations'
    from parsed p
    on conflict do nothing
    returning time
  )
  select count(*)::int, min(w.time) into inserted, earliest from written w;

  update market.data_sources set covered_until = greatest(covered_until, (select max(to_timestamp(ts::numeric / 1000)) from liquidation_rows)),
    updated_at = now()
  where name = 'okx-liquidations' and exists (select from liquidation_rows);
  drop table liquidation_rows;
  if inserted > 0 then perform app.bump_data_version('liquidations'); end if;
  return next;
end;
$$;
comment on function market.ingest_okx_liquidations(jsonb) is
'Writes OKX liquidation orders (ccxt-parsed, decimal strings: symbol, instId, ts in ms, price = bankruptcy price, contracts, contractSize, side) into market.liquidations: position long for a sell, short for a buy; quantity = contracts × contract size (market.venue_markets) in the base coin; value_usd = price × quantity × the quote''s USD price. Rows already in the feed (same instrument and millisecond) are skipped; a malformed row rejects the call (SQLSTATE 22P02). Returns the rows written and the earliest.';
revoke execute on function market.ingest_okx_liquidations(jsonb) from public;
