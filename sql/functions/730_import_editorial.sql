-- mdapi import-content: articles.json, videos.json and insights.json into market.*. Each is called
-- once per file with the whole file as jsonb, inside the import's transaction; the file has been
-- validated by src/content/schema.ts. Upserts by slug (articles) or id (videos, insights) and
-- writes only what differs, so importing the same file again writes nothing. Counters kept by
-- others (views, helpful_yes, helpful_no) are never touched by an import.

-- why: an article's translations become the file's by the rule of market.translation_changes
create or replace function market.replace_article_translations(p_items jsonb) returns int
language plpgsql
as $$
declare
  v_n int;
begin
  merge into market.article_translations t
  using market.translation_changes(p_items,
    -- only the given items' rows: not the whole table as jsonb on every import
    (select jsonb_agg(to_jsonb(s)) from market.article_translations s where s.article_id in (select (w ->> 'id')::int from jsonb_array_elements(p_items) w)),
    'article_id', 'subtitle') c
  on t.article_id = c.id and t.locale = c.locale
  when matched and c.removed then delete
  when matched then update set title = c.title, subtitle = c.field, body = c.body
  when not matched then insert (article_id, locale, title, subtitle, body) values (c.id, c.locale, c.title, c.field, c.body);
  get diagnostics v_n = row_count;
  return v_n;
end;
$$;
comment on function market.replace_article_translations(jsonb) is 'Makes the translations of the given articles ([{id, translations}], database ids) exactly the file''s in market.article_translations, writing only rows that differ (market.translation_changes). Returns the number of rows written.';
revoke execute on function market.replace_article_translations(jsonb) from public;

-- why: an insight's translations become the file's by the same rule
create or replace function market.replace_insight_translations(p_items jsonb) returns int
language plpgsql
as $$
declare
  v_n int;
begin
  merge into market.insight_translations t
  using market.translation_changes(p_items,
    -- only the given items' rows: not the whole table as jsonb on every import
    (select jsonb_agg(to_jsonb(s)) from market.insight_translations s where s.insight_id in (select (w ->> 'id')::int from jsonb_array_elements(p_items) w)),
    'insight_id', 'summary') c
  on t.insight_id = c.id and t.locale = c.locale
  when matched and c.removed then delete
  when matched then update set title = c.title, summary = c.field, body = c.body
  when not matched then insert (insight_id, locale, title, summary, body) values (c.id, c.locale, c.title, c.field, c.body);
  get diagnostics v_n = row_count;
  return v_n;
end;
$$;
comment on function market.replace_insight_translations(jsonb) is 'Makes the translations of the given insights ([{id, translations}]) exactly the file''s in market.insight_translations, writing only rows that differ (market.translation_changes). Returns the number of rows written.';
revoke execute on function market.replace_insight_translations(jsonb) from public;

-- why: articles, their translations and related entities in one set-based call
create or replace function market.import_articles(p_file jsonb) returns jsonb
language plpgsql
as $$
declare
  v_source text := market.content_source(p_file);
  v_items int := jsonb_array_length(coalesce(p_file -> 'articles', '[]'));
  v_inserted int;
  v_updated int;
  v_written int;
  v_wanted jsonb;
begin
  perform market.check_content_version('articles', p_file);
  with upserted as (
    insert into market.articles as a (slug, status, tags, hero_image, published_at, updated_at, source)
    select x.slug, coalesce(x.status, 'ACTIVE'), coalesce(x.tags, '{}'), x.hero_image, x.published_at,
      coalesce(x.updated_at, x.published_at), v_source
    from jsonb_to_recordset(coalesce(p_file -> 'articles', '[]')) as x (
      slug text, status text, tags text[], hero_image text, published_at timestamptz, updated_at timestamptz)
    on conflict (slug) do update set status = excluded.status, tags = excluded.tags, hero_image = excluded.hero_image,
      published_at = excluded.published_at, updated_at = excluded.updated_at, source = excluded.source
      where (a.status, a.tags, a.hero_image, a.published_at, a.updated_at, a.source)
        is distinct from (excluded.status, excluded.tags, excluded.hero_image, excluded.published_at, excluded.updated_at, excluded.source)
    returning xmax = 0 as inserted
  )
  select count(*) filter (where inserted), count(*) filter (where not inserted) into v_inserted, v_updated from upserted;
  v_written := v_inserted + v_updated;

  -- the file's items with their database ids, for the translations and the related entities
  select coalesce(jsonb_agg(f.value || jsonb_build_object('id', a.id)), '[]') into v_wanted
  from jsonb_array_elements(coalesce(p_file -> 'articles', '[]')) f (value)
  join market.articles a on a.slug = f.value ->> 'slug';

  v_written := v_written + market.replace_article_translations(v_wanted) + market.replace_content_entities('article', v_wanted);

  perform market.record_content_import('articles', p_file, v_items, v_source);
  return jsonb_build_object('kind', 'articles', 'items', v_items, 'inserted', v_inserted, 'updated', v_updated, 'rows_written', v_written);
end;
$$;
comment on function market.import_articles(jsonb) is
'Imports an articles.json content file (version 1): {"version", "source"?, "articles": [{slug, status?, tags?, hero_image?, published_at, updated_at?, translations: {"en": {title, subtitle?, body}, "<locale>": {title?, subtitle?, body?}}, coins?, exchanges?, wallets?}]}. '
'Upserts by slug; an article''s translations and related entities become exactly the file''s; views and helpful counts are kept. Writes only what differs. Returns {kind, items, inserted, updated, rows_written}. Used by mdapi import-content.';
revoke execute on function market.import_articles(jsonb) from public;

-- why: videos and their related entities in one set-based call
create or replace function market.import_videos(p_file jsonb) returns jsonb
language plpgsql
as $$
declare
  v_source text := market.content_source(p_file);
  v_items int := jsonb_array_length(coalesce(p_file -> 'videos', '[]'));
  v_inserted int;
  v_updated int;
begin
  perform market.check_content_version('videos', p_file);
  with upserted as (
    insert into market.videos as v (id, status, type, title, description, url, thumbnail, duration_seconds, channel, published_at, source)
    select x.id, coalesce(x.status, 'ACTIVE'), x.type, x.title, x.description, x.url, x.thumbnail, x.duration_seconds, x.channel,
      x.published_at, v_source
    from jsonb_to_recordset(coalesce(p_file -> 'videos', '[]')) as x (
      id int, status text, type text, title text, description text, url text, thumbnail text, duration_seconds int,
      channel text, published_at timestamptz)
    on conflict (id) do update set status = excluded.status, type = excluded.type, title = excluded.title,
      description = excluded.description, url = excluded.url, thumbnail = excluded.thumbnail,
      duration_seconds = excluded.duration_seconds, channel = excluded.channel, published_at = excluded.published_at, source = excluded.source
      where (v.status, v.type, v.title, v.description, v.url, v.thumbnail, v.duration_seconds, v.channel, v.published_at, v.source)
        is distinct from (excluded.status, excluded.type, excluded.title, excluded.description, excluded.url, excluded.thumbnail,
          excluded.duration_seconds, excluded.channel, excluded.published_at, excluded.source)
    returning xmax = 0 as inserted
  )
  select count(*) filter (where inserted), count(*) filter (where not inserted) into v_inserted, v_updated from upserted;

  perform market.record_content_import('videos', p_file, v_items, v_source);
  return jsonb_build_object('kind', 'videos', 'items', v_items, 'inserted', v_inserted, 'updated', v_updated,
    'rows_written', v_inserted + v_updated + market.replace_content_entities('video', coalesce(p_file -> 'videos', '[]')));
end;
$$;
comment on function market.import_videos(jsonb) is
'Imports a videos.json content file (version 1): {"version", "source"?, "videos": [{id, status?, type, title, description?, url, thumbnail?, duration_seconds?, channel?, published_at, coins?, exchanges?, wallets?}]}. '
'Upserts by id; related entities become exactly the file''s; views are kept. Writes only what differs. Returns {kind, items, inserted, updated, rows_written}. Used by mdapi import-content.';
revoke execute on function market.import_videos(jsonb) from public;

-- why: insights, their translations and related entities in one set-based call
create or replace function market.import_insights(p_file jsonb) returns jsonb
language plpgsql
as $$
declare
  v_source text := market.content_source(p_file);
  v_items jsonb := coalesce(p_file -> 'insights', '[]');
  v_inserted int;
  v_updated int;
  v_written int;
begin
  perform market.check_content_version('insights', p_file);
  with upserted as (
    insert into market.insights as i (id, status, type, sentiment, first_reported_at, last_updated_at, source)
    select x.id, coalesce(x.status, 'ACTIVE'), x.type, x.sentiment, x.first_reported_at,
      coalesce(x.last_updated_at, x.first_reported_at), v_source
    from jsonb_to_recordset(v_items) as x (
      id int, status text, type text, sentiment text, first_reported_at timestamptz, last_updated_at timestamptz)
    on conflict (id) do update set status = excluded.status, type = excluded.type, sentiment = excluded.sentiment,
      first_reported_at = excluded.first_reported_at, last_updated_at = excluded.last_updated_at, source = excluded.source
      where (i.status, i.type, i.sentiment, i.first_reported_at, i.last_updated_at, i.source)
        is distinct from (excluded.status, excluded.type, excluded.sentiment, excluded.first_reported_at, excluded.last_updated_at, excluded.source)
    returning xmax = 0 as inserted
  )
  select count(*) filter (where inserted), count(*) filter (where not inserted) into v_inserted, v_updated from upserted;
  v_written := v_inserted + v_updated;

  v_written := v_written + market.replace_insight_translations(v_items) + market.replace_content_entities('insight', v_items);

  perform market.record_content_import('insights', p_file, jsonb_array_length(v_items), v_source);
  return jsonb_build_object('kind', 'insights', 'items', jsonb_array_length(v_items), 'inserted', v_inserted, 'updated', v_updated, 'rows_written', v_written);
end;
$$;
comment on function market.import_insights(jsonb) is
'Imports an insights.json content file (version 1): {"version", "source"?, "insights": [{id, status?, type, sentiment?, first_reported_at, last_updated_at?, translations: {"en": {title, summary?, body?}, "<locale>": {...}}, coins?, exchanges?, wallets?}]}. '
'Upserts by id; translations and related entities become exactly the file''s; views are kept. Writes only what differs. Returns {kind, items, inserted, updated, rows_written}. Used by mdapi import-content.';
revoke execute on function market.import_insights(jsonb) from public;
