-- Old signatures of functions whose arguments or result changed: dropped once here, so the
-- function files (re-applied on every migrate) only create what exists now.
drop function if exists app.timescaledb_scheduler_running();
drop function if exists app.due_timescaledb_jobs();
drop function if exists market.build_index_bars(timestamptz, timestamptz, numeric, numeric);
drop function if exists api.coin_list(text, text, text, text, numeric, numeric, numeric, numeric, numeric, numeric, int[], text[], text[], text[], text, int, int);
drop function if exists market.coin_bars(int, text, timestamptz, timestamptz);
drop function if exists market.ingest_venue_candles(text, jsonb, interval);
drop function if exists api.exchange_assets(text, text, text, text, numeric, numeric, numeric, numeric, numeric, numeric, int[], text[], text[], text[], int, int);
drop function if exists app.release_stalled_webhook_workers(interval);
drop function if exists app.readiness(text[], interval);
