-- A key's name, given in the console (keys made by the CLI have none).
alter table app.api_keys add column name text check (length(name) between 1 and 100);
comment on column app.api_keys.name is 'The name its owner gave the key in the console; null for keys made by the CLI.';
