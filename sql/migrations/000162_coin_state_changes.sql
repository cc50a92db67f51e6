-- The coin state is refreshed incrementally (issue 46): each minute only the coins whose bars
-- changed, or whose 24-hour and 7-day windows moved past a bar, are computed again. The bars'
-- writers are many (the price index, imports, the simulated market, backfills), so one row
-- trigger notes every changed bar here instead of each writer doing it.
create table market.coin_state_changes (
  coin_id int not null,
  time timestamptz not null,
  inserted boolean not null
);
comment on table market.coin_state_changes is 'Bars of market.coin_bars_1m written, changed or deleted since the coin state last read them (one row per bar change, noted by a trigger): market.write_coin_state computes those coins again and removes the rows of bars up to its instant; rows of bars after it stay until their minute is reached.';
comment on column market.coin_state_changes.coin_id is 'The coin whose bar changed.';
comment on column market.coin_state_changes.time is 'Start time of the bar that changed.';
comment on column market.coin_state_changes.inserted is 'True: the bar was written new; false: an existing bar changed or was deleted (its coin is then computed again from all its bars).';

create table market.coin_state_through (
  singleton boolean primary key default true check (singleton),
  through timestamptz not null,
  old_chunks text
);
comment on table market.coin_state_through is 'The instant (p_now) market.coin_state was last computed for, one row: the next refresh computes again only what changed since. Without it the refresh is a full recomputation.';
comment on column market.coin_state_through.singleton is 'Always true: the table has one row.';
comment on column market.coin_state_through.through is 'The p_now of the last refresh of market.coin_state.';
comment on column market.coin_state_through.old_chunks is 'The chunks of market.coin_bars_1m older than 7 days then, by name: when retention has dropped one since (or a chunk has aged past 7 days), the next refresh is a full recomputation.';

create function market.note_coin_bar_change() returns trigger
language plpgsql
as $$
begin
  if tg_op = 'DELETE' then
    insert into market.coin_state_changes (coin_id, time, inserted) values (old.coin_id, old.time, false);
  else
    insert into market.coin_state_changes (coin_id, time, inserted) values (new.coin_id, new.time, tg_op = 'INSERT');
    if tg_op = 'UPDATE' and (old.coin_id, old.time) is distinct from (new.coin_id, new.time) then
      insert into market.coin_state_changes (coin_id, time, inserted) values (old.coin_id, old.time, false);
    end if;
  end if;
  return null;
end;
$$;
comment on function market.note_coin_bar_change() is 'Trigger of market.coin_bars_1m: notes the coin and time of every bar written, changed or deleted in market.coin_state_changes.';

create trigger coin_state_changes after insert or update or delete on market.coin_bars_1m
for each row execute function market.note_coin_bar_change();

-- market.write_coin_state takes a third argument (p_incremental); the two-argument one would make calls ambiguous
drop function if exists market.write_coin_state(timestamptz, boolean);
