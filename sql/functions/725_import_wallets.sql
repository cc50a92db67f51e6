-- mdapi import-content: wallets.json (the tag taxonomy and the wallet reviews) into market.*.
-- Called once per file with the whole file as jsonb, inside the import's transaction; the file
-- has been validated by src/content/schema.ts. Upserts by slug and writes only what differs, so
-- importing the same file again writes nothing.

-- why: the taxonomy, the wallets, their tags and their supported coins in one set-based call
create or replace function market.import_wallets(p_file jsonb) returns jsonb
language plpgsql
as $$
declare
  v_source text := market.content_source(p_file);
  v_items int := jsonb_array_length(coalesce(p_file -> 'wallets', '[]'));
  v_inserted int;
  v_updated int;
  v_written int := 0;
  v_n int;
  v_bad record;
begin
  perform market.check_content_version('wallets', p_file);

  insert into market.wallet_tag_categories as t (slug, name, position)
  select c.value ->> 'slug', c.value ->> 'name', (c.n - 1)::smallint
  from jsonb_array_elements(coalesce(p_file -> 'categories', '[]')) with ordinality c (value, n)
  on conflict (slug) do update set name = excluded.name, position = excluded.position
    where (t.name, t.position) is distinct from (excluded.name, excluded.position);
  get diagnostics v_n = row_count;
  v_written := v_written + v_n;

  insert into market.wallet_tags as t (slug, category, name, position)
  select g.value ->> 'slug', c.value ->> 'slug', g.value ->> 'name', (g.n - 1)::smallint
  from jsonb_array_elements(coalesce(p_file -> 'categories', '[]')) c (value)
  cross join lateral jsonb_array_elements(coalesce(c.value -> 'tags', '[]')) with ordinality g (value, n)
  on conflict (slug) do update set category = excluded.category, name = excluded.name, position = excluded.position
    where (t.category, t.name, t.position) is distinct from (excluded.category, excluded.name, excluded.position);
  get diagnostics v_n = row_count;
  v_written := v_written + v_n;

  -- a tag the taxonomy lacks is the file's fault: name the wallet and the tag
  select w.value ->> 'slug' as wallet, t.tag into v_bad
  from jsonb_array_elements(coalesce(p_file -> 'wallets', '[]')) w (value)
  cross join lateral jsonb_array_elements_text(coalesce(w.value -> 'tags', '[]')) t (tag)
  where not exists (select from market.wallet_tags x where x.slug = t.tag)
  limit 1;
  if found then
    raise exception 'wallets: wallet "%": tags: unknown tag "%"', v_bad.wallet, v_bad.tag using errcode = 'MD422';
  end if;

  with upserted as (
    insert into market.wallets as w (slug, name, status, score, price_model, released_at, description, pros, cons, logo, website, source)
    select x.slug, x.name, coalesce(x.status, 'ACTIVE'), x.score, x.price_model, x.released_at, x.description,
      coalesce(x.pros, '{}'), coalesce(x.cons, '{}'), x.logo, x.website, v_source
    from jsonb_to_recordset(coalesce(p_file -> 'wallets', '[]')) as x (
      slug text, name text, status text, score numeric, price_model text, released_at date, description text,
      pros text[], cons text[], logo text, website text)
    on conflict (slug) do update set name = excluded.name, status = excluded.status, score = excluded.score,
      price_model = excluded.price_model, released_at = excluded.released_at, description = excluded.description,
      pros = excluded.pros, cons = excluded.cons, logo = excluded.logo, website = excluded.website, source = excluded.source
      where (w.name, w.status, w.score, w.price_model, w.released_at, w.description, w.pros, w.cons, w.logo, w.website, w.source)
        is distinct from (excluded.name, excluded.status, excluded.score, excluded.price_model, excluded.released_at,
          excluded.description, excluded.pros, excluded.cons, excluded.logo, excluded.website, excluded.source)
    returning xmax = 0 as inserted
  )
  select count(*) filter (where inserted), count(*) filter (where not inserted) into v_inserted, v_updated from upserted;
  v_written := v_written + v_inserted + v_updated;

  -- tags and supported coins: exactly the file's, for the wallets the file holds
  create temp table wanted_wallet_parts on commit drop as
  select w.id as wallet_id, p.kind, p.value
  from jsonb_array_elements(coalesce(p_file -> 'wallets', '[]')) f (value)
  join market.wallets w on w.slug = f.value ->> 'slug'
  cross join lateral (
    select 'tag' as kind, t.value from jsonb_array_elements_text(coalesce(f.value -> 'tags', '[]')) t (value)
    union
    select 'coin', c.value from jsonb_array_elements_text(coalesce(f.value -> 'coins', '[]')) c (value)
  ) p;

  delete from market.wallet_taggings t
  where t.wallet_id in (select w.id from market.wallets w
      join jsonb_array_elements(coalesce(p_file -> 'wallets', '[]')) f (value) on w.slug = f.value ->> 'slug')
    and not exists (select from wanted_wallet_parts p where p.kind = 'tag' and p.wallet_id = t.wallet_id and p.value = t.tag);
  get diagnostics v_n = row_count;
  v_written := v_written + v_n;
  insert into market.wallet_taggings (wallet_id, tag)
  select p.wallet_id, p.value from wanted_wallet_parts p where p.kind = 'tag'
  on conflict do nothing;
  get diagnostics v_n = row_count;
  v_written := v_written + v_n;

  delete from market.wallet_assets a
  where a.wallet_id in (select w.id from market.wallets w
      join jsonb_array_elements(coalesce(p_file -> 'wallets', '[]')) f (value) on w.slug = f.value ->> 'slug')
    and not exists (select from wanted_wallet_parts p where p.kind = 'coin' and p.wallet_id = a.wallet_id and p.value = a.coin_slug);
  get diagnostics v_n = row_count;
  v_written := v_written + v_n;
  insert into market.wallet_assets (wallet_id, coin_slug)
  select p.wallet_id, p.value from wanted_wallet_parts p where p.kind = 'coin'
  on conflict do nothing;
  get diagnostics v_n = row_count;
  v_written := v_written + v_n;
  drop table wanted_wallet_parts;

  perform market.record_content_import('wallets', p_file, v_items, v_source);
  return jsonb_build_object('kind', 'wallets', 'items', v_items, 'inserted', v_inserted, 'updated', v_updated, 'rows_written', v_written);
end;
$$;
comment on function market.import_wallets(jsonb) is
'Imports a wallets.json content file (version 1): {"version", "source"?, "categories": [{slug, name, tags: [{slug, name}]}], "wallets": [{slug, name, status?, score, price_model, released_at?, description?, pros?, cons?, logo?, website?, tags?, coins?}]}. '
'Upserts categories and tags (display order = file order) and wallets by slug; a wallet''s tags and supported coins become exactly the file''s. Rows the file does not mention are kept. Writes only what differs. '
'Returns {kind, items, inserted, updated, rows_written}; rows_written is 0 when the same file is imported again. An unknown tag raises MD422 naming the wallet. Used by mdapi import-content.';
revoke execute on function market.import_wallets(jsonb) from public;
