-- The Editorial group: articles (list, detail, feedback), videos (a coin's, one by id) and insights
-- (list, one by id, a coin's timeline). Only published content is served: status ACTIVE and its
-- publication time passed. `locale` picks the texts with per-field English fallback
-- (market.localize); every payload's `locale` says which locale won. Reads never write: view
-- counts are the web front end's, and no function here but api.article_feedback changes a row.

-- why: "published" means the same thing for every content kind
create or replace function market.is_published(p_status text, p_published_at timestamptz) returns boolean
language sql stable parallel safe
as $$ select p_status = 'ACTIVE' and p_published_at <= now() $$;
comment on function market.is_published(text, timestamptz) is 'True for content the API serves: status ACTIVE and published (or first reported) at or before now.';

-- why: an article's texts in the locale asked for, field by field; the body travels with its
-- reading time, so that the time is that of the body served, whichever locale it came from
create or replace function market.article_texts(p_article_id int, p_locale text) returns jsonb
language sql stable
as $$
  select market.localize(jsonb_object_agg(t.locale, jsonb_build_object(
      'title', t.title,
      'subtitle', t.subtitle,
      'body', case when t.body is not null then jsonb_build_object('html', t.body, 'minutes', t.reading_time_minutes) end)), p_locale)
  from market.article_translations t where t.article_id = p_article_id
$$;
comment on function market.article_texts(int, text) is 'The article''s title, subtitle and body in p_locale with per-field fallback (market.localize), with locale and fallback_fields; body is {"html": the HTML, "minutes": its reading time}.';

-- why: one article object for the list (p_full false) and the detail (p_full true)
create or replace function market.article_json(p_article market.articles, p_texts jsonb, p_full boolean) returns json
language sql stable
as $$
  select market.json_extend(json_build_object(
      'id', p_article.id,
      'slug', p_article.slug,
      'title', p_texts -> 'title',
      'subtitle', p_texts -> 'subtitle',
      'locale', p_texts -> 'locale',
      'fallback_fields', p_texts -> 'fallback_fields',
      'tags', to_json(p_article.tags),
      'reading_time_minutes', p_texts -> 'body' -> 'minutes',
      'hero_image', p_article.hero_image,
      'entities', market.content_entities_json('article', p_article.id),
      'published_at', market.iso_time(p_article.published_at),
      'updated_at', market.iso_time(p_article.updated_at)),
    case when p_full then json_build_object(
      'body', p_texts -> 'body' -> 'html',
      'views', p_article.views,
      'helpful_yes', p_article.helpful_yes,
      'helpful_no', p_article.helpful_no) end)
$$;
comment on function market.article_json(market.articles, jsonb, boolean) is 'An article as the API returns it: id, slug, title, subtitle, locale (the locale that won), fallback_fields (fields that came from another locale), tags, reading_time_minutes, hero_image, entities [{type, slug, name}], published_at, updated_at; with p_full also body (HTML), views, helpful_yes, helpful_no.';

-- why: the article list's filters, order and page in one call
create or replace function api.article_list(
  p_locale text default 'en',
  p_tag text default null,
  p_coin text default null,
  p_exchange text default null,
  p_wallet text default null,
  p_search text default null,
  p_page int default 1,
  p_per_page int default 20
) returns json
language sql stable
as $$
  with localized as (
    select a, market.article_texts(a.id, coalesce(p_locale, 'en')) as texts
    from market.articles a
    where market.is_published(a.status, a.published_at)
      and (p_tag is null or a.tags @> array[p_tag])
      and market.content_relates_to('article', a.id, 'coin', p_coin)
      and market.content_relates_to('article', a.id, 'exchange', p_exchange)
      and market.content_relates_to('article', a.id, 'wallet', p_wallet)
  ),
  matched as materialized (
    select l.a, l.texts, row_number() over (order by (l.a).published_at desc, (l.a).id desc) as n
    from localized l
    where p_search is null
       or strpos(lower(l.texts ->> 'title'), lower(p_search)) > 0
       or strpos(lower(coalesce(l.texts ->> 'subtitle', '')), lower(p_search)) > 0
  )
  select json_build_object(
    'total', (select count(*) from matched),
    'data', coalesce((
      select json_agg(market.article_json(m.a, m.texts, false) order by m.n) from matched m
      where market.on_page(m.n, p_page, p_per_page)
    ), '[]'::json))
$$;
comment on function api.article_list(text, text, text, text, text, text, int, int) is
'One page of published articles, newest first, as JSON {"total": n, "data": [market.article_json rows]}. p_locale picks the texts (per-field English fallback); filters: p_tag one editorial tag, p_coin / p_exchange / p_wallet a related slug, p_search a case-insensitive substring of the localized title or subtitle. Endpoint: GET /api/v1/articles.';

-- why: detail by slug, with the documented 404; a read, so views stay as they are
create or replace function api.article_detail(p_slug text, p_locale text default 'en') returns json
language plpgsql stable
as $$
declare
  v_article market.articles;
begin
  select * into v_article from market.articles a
  where a.slug = lower(p_slug) and market.is_published(a.status, a.published_at);
  if v_article.id is null then
    raise exception 'Article not found.' using errcode = 'MD404';
  end if;
  return market.article_json(v_article, market.article_texts(v_article.id, coalesce(p_locale, 'en')), true);
end;
$$;
comment on function api.article_detail(text, text) is 'The published article with this slug in p_locale (per-field English fallback) with its body, views and helpful counts, as market.article_json(..., true). Never changes views. Unknown or unpublished slug: MD404 "Article not found.". Endpoint: GET /api/v1/articles/{slug}.';

-- why: the one write of the group: a reader's answer to "was this helpful?"
create or replace function api.article_feedback(p_slug text, p_helpful boolean) returns json
language plpgsql volatile
as $$
declare
  v_result json;
begin
  if p_helpful is null then
    raise exception 'helpful must be true or false.' using errcode = 'MD422';
  end if;
  update market.articles a
  set helpful_yes = a.helpful_yes + case when p_helpful then 1 else 0 end,
    helpful_no = a.helpful_no + case when p_helpful then 0 else 1 end
  where a.slug = lower(p_slug) and market.is_published(a.status, a.published_at)
  returning json_build_object('article', a.slug, 'helpful_yes', a.helpful_yes, 'helpful_no', a.helpful_no) into v_result;
  if v_result is null then
    raise exception 'Article not found.' using errcode = 'MD404';
  end if;
  -- the article's detail shows the counts: cached answers of the content group are outdated
  perform app.bump_data_version('content');
  return v_result;
end;
$$;
comment on function api.article_feedback(text, boolean) is 'Counts one "was this helpful?" answer for the published article (helpful_yes when p_helpful, else helpful_no) and returns {article (slug), helpful_yes, helpful_no}; bumps the content data version (the detail shows the counts). Unknown or unpublished slug: MD404. Endpoint: POST /api/v1/articles/{slug}/feedback.';

-- why: one video object for lists and the detail
create or replace function market.video_json(p_video market.videos, p_full boolean) returns json
language sql stable
as $$
  select market.json_extend(json_build_object(
      'id', p_video.id, 'type', p_video.type, 'title', p_video.title, 'description', p_video.description,
      'url', p_video.url, 'thumbnail', p_video.thumbnail, 'duration_seconds', p_video.duration_seconds,
      'channel', p_video.channel, 'entities', market.content_entities_json('video', p_video.id),
      'published_at', market.iso_time(p_video.published_at)),
    case when p_full then json_build_object('views', p_video.views) end)
$$;
comment on function market.video_json(market.videos, boolean) is 'A video as the API returns it: id, type, title, description, url, thumbnail, duration_seconds, channel, entities [{type, slug, name}], published_at; with p_full also views.';

-- why: a coin's videos, newest first, filtered and paginated
create or replace function api.coin_videos(
  p_slug text,
  p_type text default null,
  p_search text default null,
  p_page int default 1,
  p_per_page int default 10
) returns json
language plpgsql stable
as $$
declare
  v_coin text;
  v_result json;
begin
  select c.slug into v_coin from market.coins c where c.id = market.coin_id(p_slug);
  if p_type is not null and p_type not in ('overview', 'tutorial', 'explainer', 'review', 'analysis', 'news') then
    raise exception 'type must be one of overview, tutorial, explainer, review, analysis, news.' using errcode = 'MD422', column = 'type';
  end if;
  with matched as materialized (
    select v, row_number() over (order by v.published_at desc, v.id desc) as n
    from market.videos v
    where market.is_published(v.status, v.published_at)
      and market.content_relates_to('video', v.id, 'coin', v_coin)
      and (p_type is null or v.type = p_type)
      and (p_search is null or strpos(lower(v.title), lower(p_search)) > 0 or strpos(lower(coalesce(v.description, '')), lower(p_search)) > 0)
  )
  select json_build_object(
    'total', (select count(*) from matched),
    'data', coalesce((
      select json_agg(market.video_json(m.v, false) order by m.n) from matched m
      where market.on_page(m.n, p_page, p_per_page)
    ), '[]'::json)) into v_result;
  return v_result;
end;
$$;
comment on function api.coin_videos(text, text, text, int, int) is 'One page of the published videos related to the coin, newest first, as JSON {"total": n, "data": [market.video_json rows]}; p_type one video type, p_search a case-insensitive substring of title or description. Unknown coin: MD404 "Coin not found.". Endpoint: GET /api/v1/coins/{slug}/videos.';

-- why: one video by id, with the documented 404
create or replace function api.video_detail(p_id int) returns json
language plpgsql stable
as $$
declare
  v_video market.videos;
begin
  select * into v_video from market.videos v where v.id = p_id and market.is_published(v.status, v.published_at);
  if v_video.id is null then
    raise exception 'Video not found.' using errcode = 'MD404';
  end if;
  return market.video_json(v_video, true);
end;
$$;
comment on function api.video_detail(int) is 'The published video with this id as market.video_json(..., true). Never changes views. Unknown or unpublished id: MD404 "Video not found.". Endpoint: GET /api/v1/videos/{id}.';

-- why: an insight's texts in the locale asked for, field by field
create or replace function market.insight_texts(p_insight_id int, p_locale text) returns jsonb
language sql stable
as $$
  select market.localize(jsonb_object_agg(t.locale, to_jsonb(t) - 'insight_id' - 'locale'), p_locale)
  from market.insight_translations t where t.insight_id = p_insight_id
$$;
comment on function market.insight_texts(int, text) is 'The insight''s title, summary and body in p_locale with per-field fallback (market.localize), with locale and fallback_fields.';

-- why: one insight object for the lists, the timeline and the detail
create or replace function market.insight_json(p_insight market.insights, p_texts jsonb, p_full boolean) returns json
language sql stable
as $$
  select market.json_extend(json_build_object(
      'id', p_insight.id, 'type', p_insight.type, 'sentiment', p_insight.sentiment,
      'title', p_texts -> 'title', 'summary', p_texts -> 'summary',
      'locale', p_texts -> 'locale', 'fallback_fields', p_texts -> 'fallback_fields',
      'entities', market.content_entities_json('insight', p_insight.id),
      'first_reported_at', market.iso_time(p_insight.first_reported_at),
      'last_updated_at', market.iso_time(p_insight.last_updated_at)),
    case when p_full then json_build_object('body', p_texts -> 'body', 'views', p_insight.views) end)
$$;
comment on function market.insight_json(market.insights, jsonb, boolean) is 'An insight as the API returns it: id, type, sentiment, title, summary, locale (the locale that won), fallback_fields, entities [{type, slug, name}], first_reported_at, last_updated_at; with p_full also body and views.';

-- why: the insight list and a coin's timeline share filters and order; they page differently
create or replace function api.insight_rows(
  p_locale text default 'en',
  p_type text default null,
  p_coin text default null,
  p_search text default null,
  p_sort text default 'first_reported'
) returns table (n bigint, insight json)
language plpgsql stable
as $$
begin
  if p_type is not null and p_type not in ('per_asset', 'market_overview', 'narrative') then
    raise exception 'type must be one of per_asset, market_overview, narrative.' using errcode = 'MD422', column = 'type';
  end if;
  if p_sort is null or p_sort not in ('first_reported', 'last_updated') then
    raise exception 'sort must be first_reported or last_updated.' using errcode = 'MD422', column = 'sort';
  end if;
  return query
  with localized as (
    select i, market.insight_texts(i.id, coalesce(p_locale, 'en')) as texts
    from market.insights i
    where market.is_published(i.status, i.first_reported_at)
      and (p_type is null or i.type = p_type)
      and market.content_relates_to('insight', i.id, 'coin', p_coin)
  )
  select row_number() over (order by
      case when p_sort = 'last_updated' then (l.i).last_updated_at else (l.i).first_reported_at end desc, (l.i).id desc),
    market.insight_json(l.i, l.texts, false)
  from localized l
  where p_search is null
     or strpos(lower(l.texts ->> 'title'), lower(p_search)) > 0
     or strpos(lower(coalesce(l.texts ->> 'summary', '')), lower(p_search)) > 0;
end;
$$;
comment on function api.insight_rows(text, text, text, text, text) is
'Published insights matching an insight request, numbered n in their order (newest first by first_reported_at, or with p_sort last_updated by last_updated_at), each as market.insight_json. p_locale picks the texts (per-field English fallback); filters: p_type per_asset|market_overview|narrative, p_coin a related coin slug, p_search a case-insensitive substring of the localized title or summary.';

create or replace function api.insight_list(
  p_locale text default 'en',
  p_type text default null,
  p_coin text default null,
  p_search text default null,
  p_sort text default 'first_reported',
  p_page int default 1,
  p_per_page int default 20
) returns json
language sql stable
as $$
  with matched as materialized (select * from api.insight_rows(p_locale, p_type, p_coin, p_search, p_sort))
  select json_build_object(
    'total', (select count(*) from matched),
    'data', coalesce((
      select json_agg(m.insight order by m.n) from matched m
      where market.on_page(m.n, p_page, p_per_page)
    ), '[]'::json))
$$;
comment on function api.insight_list(text, text, text, text, text, int, int) is 'One page of api.insight_rows as JSON {"total": n, "data": [...]}. Endpoint: GET /api/v1/insights.';

-- why: a coin's insight timeline pages by offset and limit, newest first
create or replace function api.coin_insights(p_slug text, p_locale text default 'en', p_offset int default 0, p_limit int default 5)
returns json
language sql stable
as $$
  with coin as (select c.slug from market.coins c where c.id = market.coin_id(p_slug)),
  matched as materialized (select r.* from coin, api.insight_rows(p_locale, null, coin.slug, null, 'first_reported') r)
  select json_build_object(
    'total', (select count(*) from matched),
    'data', coalesce((
      select json_agg(m.insight order by m.n) from matched m
      where m.n > greatest(p_offset, 0) and m.n <= greatest(p_offset, 0)::bigint + p_limit
    ), '[]'::json))
$$;
comment on function api.coin_insights(text, text, int, int) is 'The coin''s insight timeline: published insights related to it, newest first reported first, p_limit of them after skipping p_offset, as JSON {"total": n, "data": [market.insight_json rows]}. Unknown coin: MD404 "Coin not found.". Endpoint: GET /api/v1/coins/{slug}/insights.';

-- why: one insight by id, with the documented 404
create or replace function api.insight_detail(p_id int, p_locale text default 'en') returns json
language plpgsql stable
as $$
declare
  v_insight market.insights;
begin
  select * into v_insight from market.insights i where i.id = p_id and market.is_published(i.status, i.first_reported_at);
  if v_insight.id is null then
    raise exception 'Insight not found.' using errcode = 'MD404';
  end if;
  return market.insight_json(v_insight, market.insight_texts(v_insight.id, coalesce(p_locale, 'en')), true);
end;
$$;
comment on function api.insight_detail(int, text) is 'The published insight with this id in p_locale (per-field English fallback) with body and views, as market.insight_json(..., true). Never changes views. Unknown or unpublished id: MD404 "Insight not found.". Endpoint: GET /api/v1/insights/{id}.';
