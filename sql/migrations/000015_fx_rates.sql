-- Fiat exchange rates against the US dollar, as a time series: the /prices `convert` option and
-- conversions read the latest rate per currency. Seeded with approximate fixed rates until a
-- reference source (ECB, a later issue) writes real ones.
create table market.fx_rates (
  time timestamptz not null,
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  rate numeric not null check (rate > 0),
  source text not null references market.data_sources (name),
  primary key (currency, time)
);
select create_hypertable('market.fx_rates', 'time', chunk_time_interval => interval '1 year', create_default_indexes => false);
comment on table market.fx_rates is 'Fiat exchange rates: rate = units of currency per 1 USD at time (USD itself is 1). Latest per currency: market.fx_latest.';
comment on column market.fx_rates.rate is 'Units of the currency per 1 US dollar; a USD price times rate is the price in the currency.';

create view market.fx_latest as
select distinct on (currency) currency, rate, time, source
from market.fx_rates
order by currency, time desc;
comment on view market.fx_latest is 'The latest rate per currency (units per 1 USD), with its time and source.';

insert into market.data_sources (name, kind, demo, description) values
  ('fx-seed', 'reference', true, 'Approximate fiat rates of July 2025, fixed: placeholders until a reference FX source runs.');

insert into market.fx_rates (time, currency, rate, source)
select '2025-07-01 00:00:00+00', currency, rate, 'fx-seed'
from (values
  ('USD', 1::numeric), ('EUR', 0.86), ('JPY', 147), ('BGN', 1.68), ('CZK', 21.2), ('DKK', 6.42),
  ('GBP', 0.74), ('HUF', 342), ('PLN', 3.66), ('RON', 4.37), ('SEK', 9.6), ('CHF', 0.80),
  ('ISK', 122), ('NOK', 10.1), ('HRK', 6.48), ('RUB', 79), ('TRY', 40.5), ('AUD', 1.53),
  ('BRL', 5.45), ('CAD', 1.37), ('CNY', 7.17), ('HKD', 7.85), ('IDR', 16300), ('ILS', 3.37),
  ('INR', 85.8), ('KRW', 1370), ('MXN', 18.8), ('MYR', 4.22), ('NZD', 1.66), ('PHP', 56.5),
  ('SGD', 1.28), ('THB', 32.5), ('ZAR', 17.7), ('ARS', 1200), ('DZD', 130), ('MAD', 9.0),
  ('TWD', 29.5)
) as seed (currency, rate);
