-- Curated content (wallet reviews, articles, videos, insights) is loaded from versioned JSON files
-- by `mdapi import-content DIR`. This ledger records the last file imported per kind, so that
-- re-importing the same file is seen as such and changes nothing.
create table market.content_imports (
  kind text primary key check (kind in ('wallets', 'articles', 'videos', 'insights')),
  version int not null check (version >= 1),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  items int not null check (items >= 0),
  source text not null references market.data_sources (name),
  imported_at timestamptz not null default now()
);
comment on table market.content_imports is 'The last content file imported per kind (wallets, articles, videos, insights) by mdapi import-content: its format version, SHA-256, item count, source and time. A re-import of the same file leaves this row and every content row unchanged.';
comment on column market.content_imports.kind is 'Which file: wallets.json, articles.json, videos.json or insights.json of the imported directory.';
comment on column market.content_imports.version is 'The file''s "version" field: the format version it was written in.';
comment on column market.content_imports.sha256 is 'SHA-256 of the file as imported (hex).';
comment on column market.content_imports.items is 'Number of items (wallets, articles, videos or insights) the file holds.';
comment on column market.content_imports.source is 'The data source the file''s content is recorded under (market.data_sources): demo-content for the demo set, content-import by default.';
