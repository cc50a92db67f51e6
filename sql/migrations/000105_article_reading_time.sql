-- An article's reading time is computed when its text is written, not on every read of a list
-- (two regular-expression passes over the whole body, about half a millisecond an article): a
-- stored generated column, so neither an import nor an edit by hand can leave it stale.
alter table market.article_translations
  add column reading_time_minutes int generated always as (
    case when body is not null then greatest(1, ceil(coalesce(array_length(regexp_split_to_array(
      btrim(regexp_replace(regexp_replace(body, '<[^>]*>', ' ', 'g'), '\s+', ' ', 'g')), ' '), 1), 0) / 200.0))::int end
  ) stored;
comment on column market.article_translations.reading_time_minutes is 'Minutes to read body at 200 words a minute (HTML tags stripped), at least 1; null without a body. Computed by PostgreSQL whenever body is written.';
comment on column market.article_translations.body is 'The article as HTML (reading_time_minutes is computed from it).';
-- the function it replaces: the read path took the body's reading time from it
drop function if exists market.reading_time_minutes(text);
