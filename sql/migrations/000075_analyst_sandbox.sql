-- On the embedded database every client shares one session logged in as the superuser, and the
-- analyst runs under SET SESSION AUTHORIZATION. set_config('session_authorization', …) (and
-- UPDATE pg_settings, which calls it) would switch back from any SQL text, even one built at run
-- time (query_to_xml, ts_stat), so PUBLIC loses set_config there; superusers (the service) are
-- not concerned. Revoking TEMP would not help: the shared session's temporary schema, once made by
-- anyone, is open to every role of the session (and PGlite fails to update pg_database), so the
-- multiplexer refuses CREATE FUNCTION from the analyst instead.
-- On a database server the analyst logs in as itself and cannot escalate, and tools running as
-- ordinary roles (pg_dump among them) call set_config: nothing changes there.
do $$
begin
  if version() like '%emcc%' then
    revoke execute on function pg_catalog.set_config(text, text, boolean) from public;
  end if;
end
$$;
