-- The Wallets group: the wallet list and release timeline (filters, sort, pagination, the highest
-- score of all wallets), wallet detail with its tags grouped by taxonomy category, and compare.
-- The supported assets of a wallet are the coin list restricted to market.wallet_coin_ids().
-- Scores and counts are numbers, released_at a date (YYYY-MM-DD). DRAFT wallets never appear.

-- why: one row shape for every wallet response, readable by analysts as a view
create or replace view api.wallets as
select w.id, w.slug, w.name, w.score::double precision as score,
  (select count(*)::int from market.wallet_assets a join market.coins c on c.slug = a.coin_slug
   where a.wallet_id = w.id and c.status = any (market.public_coin_statuses())) as assets,
  cardinality(w.pros) as pros, cardinality(w.cons) as cons,
  -- spelled as the reference spells it: Active, Discontinued (stored upper case)
  w.price_model, initcap(w.status) as status, market.iso_date(w.released_at) as released_at,
  market.logo_url('wallets', w.slug, w.logo) as logo
from market.wallets w
where w.status <> 'DRAFT';
comment on view api.wallets is 'Published wallets (not DRAFT) as the wallet list returns them: score (0-100), assets (supported coins in a public listing status), pros and cons (counts), price_model, status (Active or Discontinued), released_at (YYYY-MM-DD or null), logo.';

-- why: the highest published score, the list's meta.top_score, whatever the filters
create or replace function api.wallet_top_score() returns double precision
language sql stable
as $$ select max(score) from api.wallets $$;
comment on function api.wallet_top_score() is 'The highest score of all published wallets (null when there are none): meta.top_score of the Wallets endpoints, to normalise scores to 0-1.';

-- why: one sort key per requested field, sorted nulls last, so that nulls come last in both
-- directions (as for the coin lists, market.coin_sort_key)
create or replace function market.wallet_sort_key(p_field text, p_row api.wallets) returns numeric
-- stable, as text::date is: declared immutable around it, it was never inlined (market.ticker_sort_key)
language sql stable parallel safe
as $$
  select case ltrim(p_field, '-')
      when 'score' then p_row.score::numeric
      when 'released_at' then (p_row.released_at::date - date '1970-01-01')::numeric
      when 'assets' then p_row.assets::numeric
      when 'pros' then p_row.pros::numeric
      when 'cons' then p_row.cons::numeric
    end * case when left(p_field, 1) = '-' then -1 else 1 end
$$;
comment on function market.wallet_sort_key(text, api.wallets) is 'The sort value of a wallet for one sort field of the Wallets lists (score, released_at, assets, pros, cons; a leading - negates it for descending). Null for no field or a null value.';

-- why: the list and the timeline share filters, row shape and sort; only the default order differs
create or replace function api.wallet_rows(
  p_list text default 'all',
  p_search text default null,
  p_min_score numeric default null,
  p_max_score numeric default null,
  p_tags text[] default null,
  p_ids int[] default null,
  p_slugs text[] default null,
  p_sort text[] default null
) returns setof api.wallets
language plpgsql stable
as $$
declare
  v_field text;
begin
  if p_list is null or p_list not in ('all', 'timeline') then
    raise exception 'list must be all or timeline.' using errcode = 'MD422';
  end if;
  if coalesce(cardinality(p_sort), 0) > 5 then
    raise exception 'sort takes at most 5 fields.' using errcode = 'MD422', column = 'sort';
  end if;
  foreach v_field in array coalesce(p_sort, '{}') loop
    if v_field is null or v_field !~ '^-?(score|released_at|assets|pros|cons)$' then
      raise exception 'Unknown sort field "%". Sortable: score, released_at, assets, pros, cons.', v_field using errcode = 'MD422';
    end if;
  end loop;

  return query
  select w.*
  from api.wallets w
  where (p_search is null or strpos(lower(w.name), lower(p_search)) > 0 or strpos(w.slug, lower(p_search)) > 0)
    and (p_min_score is null or w.score >= p_min_score)
    and (p_max_score is null or w.score <= p_max_score)
    -- every tag asked for: tags narrow the list
    and (p_tags is null or (select count(distinct t.tag) from market.wallet_taggings t
                            where t.wallet_id = w.id and t.tag = any (p_tags)) = cardinality(array(select distinct unnest(p_tags))))
    and ((p_ids is null and p_slugs is null) or w.id = any (p_ids) or w.id in (select i from market.wallet_ids(p_slugs) i))
  order by
    -- an unused field's key is null in every row
    market.wallet_sort_key(p_sort[1], w) nulls last,
    market.wallet_sort_key(p_sort[2], w) nulls last,
    market.wallet_sort_key(p_sort[3], w) nulls last,
    market.wallet_sort_key(p_sort[4], w) nulls last,
    market.wallet_sort_key(p_sort[5], w) nulls last,
    -- defaults: the list by score, the timeline newest release first (unknown dates last)
    case when p_list = 'timeline' then w.released_at end desc nulls last,
    w.score desc, w.name, w.id;
end;
$$;
comment on function api.wallet_rows(text, text, numeric, numeric, text[], int[], text[], text[]) is
'Every published wallet matching a Wallets list request, in its order, as api.wallets rows. p_list: all (GET /wallets: highest score first) or timeline (GET /wallets/timeline: newest release first, unknown dates last); p_sort replaces either default. '
'Filters: p_search a case-insensitive substring of name or slug; inclusive score bounds; p_tags tag slugs the wallet must all carry; selectors p_ids and p_slugs. p_sort: score, released_at, assets, pros, cons, a leading - for descending, nulls last either way; ties by score (highest first), name, id. Paginated: api.wallet_list.';

-- why: the paginated envelope's data, total and top score from one call
create or replace function api.wallet_list(
  p_list text default 'all',
  p_search text default null,
  p_min_score numeric default null,
  p_max_score numeric default null,
  p_tags text[] default null,
  p_ids int[] default null,
  p_slugs text[] default null,
  p_sort text[] default null,
  p_page int default 1,
  p_per_page int default 100
) returns json
language sql stable
as $$
  with matched as materialized (
    select r, row_number() over () as n
    from api.wallet_rows(p_list, p_search, p_min_score, p_max_score, p_tags, p_ids, p_slugs, p_sort) r
  )
  select json_build_object(
    'total', (select count(*) from matched),
    'top_score', api.wallet_top_score(),
    'data', coalesce((
      select json_agg(m.r order by m.n) from matched m
      where market.on_page(m.n, p_page, p_per_page)
    ), '[]'::json))
$$;
comment on function api.wallet_list(text, text, numeric, numeric, text[], int[], text[], text[], int, int) is
'One page of a Wallets list as JSON {"total": n, "top_score": highest score of ALL published wallets (not only the matches), "data": [api.wallets rows]}: the arguments of api.wallet_rows plus p_page (1-based) and p_per_page. Endpoints: GET /api/v1/wallets (p_list all), /wallets/timeline (timeline).';

-- why: the detail and compare responses share one object per wallet
create or replace function market.wallet_json(p_id int) returns json
language sql stable
as $$
  select json_build_object(
    'id', w.id, 'slug', w.slug, 'name', w.name, 'score', w.score, 'assets', w.assets, 'pros', w.pros, 'cons', w.cons,
    'price_model', w.price_model, 'status', w.status, 'released_at', w.released_at, 'logo', w.logo,
    'website', m.website,
    'description', m.description,
    'highlights', json_build_object('pros', to_json(m.pros), 'cons', to_json(m.cons)),
    'categories', coalesce((
      -- the reference's shape {group, tags: [{slug, name, value}]}; name is the category's label (extra);
      -- value is null: this taxonomy has no per-tag value (the reference's example has none either)
      select json_agg(json_build_object('group', c.slug, 'name', c.name, 'tags', c.tags) order by c.position, c.slug)
      from (
        select k.slug, k.name, k.position,
          json_agg(json_build_object('slug', t.slug, 'name', t.name, 'value', null) order by t.position, t.slug) as tags
        from market.wallet_taggings g
        join market.wallet_tags t on t.slug = g.tag
        join market.wallet_tag_categories k on k.slug = t.category
        where g.wallet_id = w.id
        group by k.slug, k.name, k.position
      ) c), '[]'::json))
  from api.wallets w
  join market.wallets m on m.id = w.id
  where w.id = p_id
$$;
comment on function market.wallet_json(int) is 'A published wallet as the detail endpoint returns it: the list fields plus website, description, highlights {pros: [text], cons: [text]} and categories [{group (category slug), name, tags: [{slug, name, value (always null here)}]}] (only categories the wallet has tags in, in taxonomy order).';

-- why: detail by slug, with the documented 404
create or replace function api.wallet_detail(p_slug text) returns json
language sql stable
as $$ select market.wallet_json(market.wallet_id(p_slug)) $$;
comment on function api.wallet_detail(text) is 'The published wallet with this slug as market.wallet_json() builds it (list fields, website, description, highlights, grouped tag categories). Unknown or DRAFT slug: MD404 "Wallet not found.". Endpoint: GET /api/v1/wallets/{slug}.';

-- why: side by side, in the order asked, each with its tags; an unknown slug is named
create or replace function api.wallet_compare(p_slugs text[]) returns json
language plpgsql stable
as $$
declare
  v_slug text;
begin
  if coalesce(cardinality(p_slugs), 0) not between 2 and 4 then
    raise exception 'slugs takes 2 to 4 wallet slugs.' using errcode = 'MD422', column = 'slugs';
  end if;
  if cardinality(array(select distinct lower(s) from unnest(p_slugs) s)) <> cardinality(p_slugs) then
    raise exception 'slugs must not repeat a wallet.' using errcode = 'MD422', column = 'slugs';
  end if;
  select s into v_slug from unnest(p_slugs) s
  where not exists (select from api.wallets w where w.slug = lower(s)) limit 1;
  if found then
    raise exception 'Wallet not found: %.', v_slug using errcode = 'MD404';
  end if;
  return (select json_agg(market.wallet_json(w.id) order by i.n)
          from unnest(p_slugs) with ordinality i (slug, n) join api.wallets w on w.slug = lower(i.slug));
end;
$$;
comment on function api.wallet_compare(text[]) is 'Two to four published wallets side by side, in the order of p_slugs, each as market.wallet_json() (with its grouped tag categories). Fewer than 2, more than 4 or repeated slugs: MD422; an unknown one: MD404 naming it. Endpoint: GET /api/v1/wallets/compare.';
