-- Curated content (wallets, articles, videos, insights): what every content reader and importer
-- shares. Per-locale texts are resolved per field with market.localize(); related coins, exchanges
-- and wallets are referenced by slug and resolved to their names when they exist.

-- why: a content object is its list fields plus, for a detail, a few more; joined as json (not jsonb,
-- which would sort the keys) so the fields keep the order the API documents
create or replace function market.json_extend(p_object json, p_more json) returns json
language sql immutable parallel safe
as $$
  select case when p_more is null then p_object else (
    select json_object_agg(e.key, e.value order by e.part, e.n)
    from (
      select 1 as part, o.key, o.value, o.n from json_each(p_object) with ordinality o (key, value, n)
      union all
      select 2, m.key, m.value, m.n from json_each(p_more) with ordinality m (key, value, n)
    ) e)
  end
$$;
comment on function market.json_extend(json, json) is 'The keys of p_object followed by those of p_more (null: p_object alone), in order.';

-- why: the related coins, exchanges and wallets of one piece of content, in one shape for every kind
create or replace function market.content_entities_json(p_kind text, p_id int) returns json
language sql stable
as $$
  select coalesce(json_agg(json_build_object(
      'type', e.entity_type,
      'slug', e.entity_slug,
      'name', case e.entity_type
        when 'coin' then (select c.name from market.coins c where c.slug = e.entity_slug)
        when 'exchange' then (select x.name from market.exchanges x where x.slug = e.entity_slug)
        when 'wallet' then (select w.name from market.wallets w where w.slug = e.entity_slug and w.status <> 'DRAFT')
      end)
    order by e.position, e.entity_type, e.entity_slug), '[]'::json)
  from market.content_entities e
  where case p_kind when 'article' then e.article_id when 'video' then e.video_id when 'insight' then e.insight_id end = p_id
$$;
comment on function market.content_entities_json(text, int) is 'The related coins, exchanges and wallets of an article, video or insight (p_kind article|video|insight) as [{type, slug, name}], in display order; name is null while no coin, exchange or published wallet has the slug.';

-- why: "is it about this coin / exchange / wallet?" asked the same way by every Editorial filter
create or replace function market.content_relates_to(p_kind text, p_id int, p_type text, p_slug text) returns boolean
language sql stable
as $$
  select p_slug is null or exists (
    select from market.content_entities e
    where e.entity_type = p_type and e.entity_slug = lower(p_slug)
      and case p_kind when 'article' then e.article_id when 'video' then e.video_id when 'insight' then e.insight_id end = p_id)
$$;
comment on function market.content_relates_to(text, int, text, text) is 'True when the article, video or insight (p_kind, p_id) relates to the coin, exchange or wallet (p_type) with slug p_slug, or when p_slug is null (no filter).';

-- why: the supported coins of a wallet as the coin list's p_within, so /wallets/{slug}/assets is the coin list
create or replace function market.wallet_coin_ids(p_slug text) returns int[]
language sql stable
as $$
  select coalesce(array_agg(c.id order by c.id), '{}')
  from market.wallet_assets a
  join market.coins c on c.slug = a.coin_slug
  where a.wallet_id = market.wallet_id(p_slug)
$$;
comment on function market.wallet_coin_ids(text) is 'Ids of the coins the published wallet supports (market.wallet_assets joined to market.coins by slug; an empty array when none). Unknown or DRAFT wallet: MD404.';

-- why: the file's version is checked where the data is written too, not only in TypeScript
create or replace function market.check_content_version(p_kind text, p_file jsonb) returns void
language plpgsql immutable
as $$
begin
  if p_file ->> 'version' is distinct from '1' then
    raise exception '%: unsupported version %', p_kind, coalesce(p_file ->> 'version', 'null') using errcode = 'MD422';
  end if;
end;
$$;
comment on function market.check_content_version(text, jsonb) is 'Raises MD422 unless the content file''s "version" is 1, the only format version so far.';

-- why: the data source a content file is recorded under, created on its first import
create or replace function market.content_source(p_file jsonb) returns text
language plpgsql
as $$
declare
  v_name text := coalesce(p_file #>> '{source,name}', 'content-import');
begin
  insert into market.data_sources as s (name, kind, demo, description)
  values (v_name, 'import', coalesce((p_file #>> '{source,demo}')::boolean, false),
    coalesce(p_file #>> '{source,description}', 'Curated content imported with mdapi import-content.'))
  on conflict (name) do update set demo = excluded.demo, description = excluded.description, updated_at = now()
    where (s.demo, s.description) is distinct from (excluded.demo, excluded.description);
  return v_name;
end;
$$;
comment on function market.content_source(jsonb) is 'The market.data_sources row named by a content file''s "source" {name, demo, description} (default content-import, not demo), created or updated to match; returns its name.';
revoke execute on function market.content_source(jsonb) from public;

-- why: an import that changes nothing must not even rewrite its ledger row
create or replace function market.record_content_import(p_kind text, p_file jsonb, p_items int, p_source text) returns void
language sql
as $$
  insert into market.content_imports as i (kind, version, sha256, items, source)
  values (p_kind, (p_file ->> 'version')::int, encode(sha256(convert_to(p_file::text, 'UTF8')), 'hex'), p_items, p_source)
  on conflict (kind) do update set version = excluded.version, sha256 = excluded.sha256, items = excluded.items,
    source = excluded.source, imported_at = now()
    where i.sha256 is distinct from excluded.sha256 or i.source is distinct from excluded.source;
  select app.bump_data_version('content');
$$;
comment on function market.record_content_import(text, jsonb, int, text) is 'Records the content file last imported for p_kind in market.content_imports (SHA-256 of its canonical jsonb text); leaves the row alone when the same file is imported again.';
revoke execute on function market.record_content_import(text, jsonb, int, text) from public;

-- why: the related-entity rows a content file asks for, shared by the three importers
create or replace function market.wanted_content_entities(p_items jsonb, p_key text default 'id')
returns table (id int, entity_type text, entity_slug text, "position" smallint)
language sql immutable
as $$
  select (i.value ->> p_key)::int, e.entity_type, e.entity_slug,
    (row_number() over (partition by i.value ->> p_key order by e.kind_order, e.n) - 1)::smallint
  from jsonb_array_elements(p_items) as i (value)
  cross join lateral (
    select 'coin' as entity_type, 1 as kind_order, v.slug as entity_slug, v.n from jsonb_array_elements_text(coalesce(i.value -> 'coins', '[]')) with ordinality v (slug, n)
    union all
    select 'exchange', 2, v.slug, v.n from jsonb_array_elements_text(coalesce(i.value -> 'exchanges', '[]')) with ordinality v (slug, n)
    union all
    select 'wallet', 3, v.slug, v.n from jsonb_array_elements_text(coalesce(i.value -> 'wallets', '[]')) with ordinality v (slug, n)
  ) e
$$;
comment on function market.wanted_content_entities(jsonb, text) is 'The (content id, entity type, slug, position) rows a content file''s items ask for: their "coins", then "exchanges", then "wallets" arrays, in file order. p_key names the item field holding the content id.';

-- why: replace an item's related entities with the file's, writing only what differs (a re-import writes nothing)
create or replace function market.replace_content_entities(p_kind text, p_wanted jsonb) returns int
language plpgsql
as $$
declare
  v_written int := 0;
  v_n int;
begin
  -- p_wanted: [{id, coins, exchanges, wallets}] with the database ids of the items
  delete from market.content_entities c
  where case p_kind when 'article' then c.article_id when 'video' then c.video_id else c.insight_id end
      in (select (x ->> 'id')::int from jsonb_array_elements(p_wanted) x)
    and not exists (
      select from market.wanted_content_entities(p_wanted) w
      where w.id = case p_kind when 'article' then c.article_id when 'video' then c.video_id else c.insight_id end
        and w.entity_type = c.entity_type and w.entity_slug = c.entity_slug);
  get diagnostics v_n = row_count;
  v_written := v_written + v_n;

  update market.content_entities c set position = w.position
  from market.wanted_content_entities(p_wanted) w
  where w.id = case p_kind when 'article' then c.article_id when 'video' then c.video_id else c.insight_id end
    and w.entity_type = c.entity_type and w.entity_slug = c.entity_slug and c.position <> w.position;
  get diagnostics v_n = row_count;
  v_written := v_written + v_n;

  insert into market.content_entities (article_id, video_id, insight_id, entity_type, entity_slug, position)
  select case when p_kind = 'article' then w.id end, case when p_kind = 'video' then w.id end,
    case when p_kind = 'insight' then w.id end, w.entity_type, w.entity_slug, w.position
  from market.wanted_content_entities(p_wanted) w
  where not exists (
    select from market.content_entities c
    where w.id = case p_kind when 'article' then c.article_id when 'video' then c.video_id else c.insight_id end
      and w.entity_type = c.entity_type and w.entity_slug = c.entity_slug);
  get diagnostics v_n = row_count;
  return v_written + v_n;
end;
$$;
comment on function market.replace_content_entities(text, jsonb) is 'Makes the related entities of the given articles, videos or insights (p_kind) exactly those of p_wanted [{id, coins, exchanges, wallets}], writing only rows that differ. Returns the number of rows written.';
revoke execute on function market.replace_content_entities(text, jsonb) from public;

-- why: articles and insights keep their texts per locale in tables of one shape (owner id, locale,
-- title, one more field, body); one rule decides what an import writes to either, each table's
-- replace_*_translations applies it
create or replace function market.translation_changes(p_items jsonb, p_stored jsonb, p_owner text, p_field text)
returns table (id int, locale text, title text, field text, body text, removed boolean)
language sql stable
as $$
  with wanted as (
    select (w ->> 'id')::int as id, l.key as locale, l.value ->> 'title' as title, l.value ->> p_field as field,
      l.value ->> 'body' as body
    from jsonb_array_elements(p_items) w
    cross join lateral jsonb_each(w -> 'translations') l
  ), stored as (
    select (s ->> p_owner)::int as id, s ->> 'locale' as locale, s ->> 'title' as title, s ->> p_field as field,
      s ->> 'body' as body
    from jsonb_array_elements(coalesce(p_stored, '[]')) s
    where (s ->> p_owner)::int in (select (w ->> 'id')::int from jsonb_array_elements(p_items) w)
  )
  select s.id, s.locale, null, null, null, true from stored s
  where not exists (select from wanted w where w.id = s.id and w.locale = s.locale)
  union all
  select w.id, w.locale, w.title, w.field, w.body, false from wanted w
  where not exists (
    select from stored s
    where s.id = w.id and s.locale = w.locale and (s.title, s.field, s.body) is not distinct from (w.title, w.field, w.body))
$$;
comment on function market.translation_changes(jsonb, jsonb, text, text) is 'What makes the stored translations of the given content items exactly the file''s. p_items: [{id, translations: {"<locale>": {title, <p_field>, body}}}] with database ids; p_stored: the translation table''s rows as jsonb (to_jsonb; rows of other items are ignored), p_owner naming their item id column and p_field the text between title and body (subtitle, summary). Returns the rows to delete (removed: a stored locale of an item that the file no longer has) and the rows to insert or update (a locale that is new or differs in any field); a translation the file leaves as it is does not appear, so a re-import writes nothing.';
revoke execute on function market.translation_changes(jsonb, jsonb, text, text) from public;
