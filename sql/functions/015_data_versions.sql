-- The data version of a group of served data (app.data_versions), bumped at the end of each
-- refresh that writes it; the NOTIFY reaches every listening API process when the refresh commits.
create or replace function app.bump_data_version(p_name text) returns bigint
language plpgsql volatile
as $$
declare
  v_version bigint;
  v_changed_at timestamptz;
begin
  insert into app.data_versions as v (name, version, changed_at) values (p_name, 1, clock_timestamp())
  on conflict (name) do update set version = v.version + 1, changed_at = clock_timestamp()
  returning v.version, v.changed_at into v_version, v_changed_at;
  -- the time rides along so that every process gives the same Last-Modified
  perform pg_notify('data_version', p_name || ':' || v_version || ':' || floor(extract(epoch from v_changed_at) * 1000)::bigint);
  return v_version;
end;
$$;
comment on function app.bump_data_version(text) is 'Increments the version of the data group p_name in app.data_versions (creating it at 1), sets its changed_at and sends NOTIFY data_version with payload ''name:version:changed_at in epoch milliseconds'' (delivered when the calling transaction commits). Called at the end of every refresh function that changes what the API serves. Returns the new version.';
revoke execute on function app.bump_data_version(text) from public;
