-- Liveness of the job workers. graphile-worker keeps a dead worker's locks for 4 hours; every
-- live worker process beats here and, in the same call, gives back the locks of workers whose
-- beat went stale, so a crash or SIGKILL costs a bounded pause instead of a frozen market.
create or replace function app.release_dead_workers(p_stale interval) returns int
language plpgsql volatile
set search_path = app, pg_temp
as $$
declare
  v_workers text[];
begin
  -- A worker with no beat on record (another program's runner, or one killed before its first
  -- beat) counts as dead once its lock is older than the bound.
  select array_agg(distinct l.locked_by) into v_workers
  from (
    select locked_by, locked_at from graphile_worker._private_jobs where locked_by is not null
    union all
    select locked_by, locked_at from graphile_worker._private_job_queues where locked_by is not null
  ) l
  left join app.worker_heartbeats h on h.worker_id = l.locked_by
  where coalesce(h.beat_at, l.locked_at) < now() - p_stale;
  if v_workers is null then
    return 0;
  end if;
  perform graphile_worker.force_unlock_workers(v_workers);
  delete from app.worker_heartbeats where worker_id = any (v_workers);
  return cardinality(v_workers);
end;
$$;
comment on function app.release_dead_workers(interval) is
'Releases every job and queue lock held by a graphile-worker worker pool whose heartbeat (app.worker_heartbeats) is older than p_stale, '
'or that never beat and has held its lock longer than that. The released jobs run again at once; returns the number of workers released.';

create or replace function app.worker_heartbeat(p_process text, p_worker_ids text[], p_stale interval) returns int
language plpgsql volatile
set search_path = app, pg_temp
as $$
begin
  insert into app.worker_heartbeats as h (worker_id, process)
  select id, p_process from unnest(p_worker_ids) id
  on conflict (worker_id) do update set beat_at = now(), process = excluded.process;
  delete from app.worker_heartbeats where beat_at < now() - interval '1 day';
  return app.release_dead_workers(p_stale);
end;
$$;
comment on function app.worker_heartbeat(text, text[], interval) is
'One beat of a worker process: records that its workers are alive, then releases the locks of dead workers (app.release_dead_workers). Returns the number released.';

create or replace function app.worker_farewell(p_worker_ids text[]) returns void
language sql volatile
as $$
  -- whatever a stopped pool still holds was abandoned with its jobs (their transactions roll back)
  select graphile_worker.force_unlock_workers(p_worker_ids);
  delete from app.worker_heartbeats where worker_id = any (p_worker_ids);
$$;
comment on function app.worker_farewell(text[]) is 'Called by a stopping worker process: releases every lock its pools still hold and forgets their beats.';
