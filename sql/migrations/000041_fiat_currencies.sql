-- Fiat currencies usable as conversion legs: names and signs for the ISO codes that
-- market.fx_rates carries, and the ECB reference rates as a source of those rates.
create table market.fiat_currencies (
  code text primary key check (code ~ '^[A-Z]{3}$'),
  name text not null,
  sign text,
  active boolean not null default true
);
comment on table market.fiat_currencies is 'Fiat currencies by ISO 4217 code: name and sign. A currency is a conversion leg when it is active and has a rate in market.fx_latest.';
comment on column market.fiat_currencies.active is 'False for a currency no longer used for conversion (e.g. HRK, replaced by EUR in 2023), even if an old rate remains.';

insert into market.fiat_currencies (code, name, sign, active) values
  ('USD', 'US Dollar', '$', true), ('EUR', 'Euro', '€', true), ('JPY', 'Japanese Yen', '¥', true),
  ('BGN', 'Bulgarian Lev', 'лв', true), ('CZK', 'Czech Koruna', 'Kč', true), ('DKK', 'Danish Krone', 'kr', true),
  ('GBP', 'Pound Sterling', '£', true), ('HUF', 'Hungarian Forint', 'Ft', true), ('PLN', 'Polish Zloty', 'zł', true),
  ('RON', 'Romanian Leu', 'lei', true), ('SEK', 'Swedish Krona', 'kr', true), ('CHF', 'Swiss Franc', 'CHF', true),
  ('ISK', 'Icelandic Krona', 'kr', true), ('NOK', 'Norwegian Krone', 'kr', true), ('HRK', 'Croatian Kuna', 'kn', false),
  ('RUB', 'Russian Ruble', '₽', true), ('TRY', 'Turkish Lira', '₺', true), ('AUD', 'Australian Dollar', 'A$', true),
  ('BRL', 'Brazilian Real', 'R$', true), ('CAD', 'Canadian Dollar', 'C$', true), ('CNY', 'Chinese Yuan', '¥', true),
  ('HKD', 'Hong Kong Dollar', 'HK$', true), ('IDR', 'Indonesian Rupiah', 'Rp', true), ('ILS', 'Israeli New Shekel', '₪', true),
  ('INR', 'Indian Rupee', '₹', true), ('KRW', 'South Korean Won', '₩', true), ('MXN', 'Mexican Peso', 'Mex$', true),
  ('MYR', 'Malaysian Ringgit', 'RM', true), ('NZD', 'New Zealand Dollar', 'NZ$', true), ('PHP', 'Philippine Peso', '₱', true),
  ('SGD', 'Singapore Dollar', 'S$', true), ('THB', 'Thai Baht', '฿', true), ('ZAR', 'South African Rand', 'R', true),
  ('ARS', 'Argentine Peso', 'AR$', true), ('DZD', 'Algerian Dinar', 'DA', true), ('MAD', 'Moroccan Dirham', 'DH', true),
  ('TWD', 'New Taiwan Dollar', 'NT$', true);

insert into market.data_sources (name, kind, demo, description) values
  ('ecb', 'reference', false,
   'Euro foreign exchange reference rates of the European Central Bank (eurofxref-daily.xml, published on TARGET working days around 16:00 CET), converted to units per US dollar through the EUR/USD rate.');
