-- A venue named in EXCHANGES beyond the ten verified on the loopback replay (any other ccxt id with
-- public tickers and one-minute candles) is read as ccxt reads it: labelled unverified.
alter table market.exchanges add column verified boolean not null default true;
comment on column market.exchanges.verified is 'false: a real venue read through a ccxt id whose formats were never verified on the loopback replay of its documented REST and stream formats (named in EXCHANGES beyond the ten supported venues; read through REST alone, as ccxt reads it); true: a supported venue, or a venue of the demo market or an import.';
