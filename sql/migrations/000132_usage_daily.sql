-- Responses per key, UTC day, endpoint and status class: the console's usage page (30-day chart,
-- endpoint × status class table, 429 refusals, CSV). Written by the same admission flush that
-- writes the quota counters (app.admission_flush, "responses"), or per response by
-- app.record_response when ADMISSION_FLUSH_MS=0: a response's status is known only once it is
-- written, so this is the one count that is taken after the answer, not at admission.
-- A plain table: at most keys × endpoints × 5 classes rows a day; app.prune_counters deletes days
-- older than 400 days (a year back plus the current month) through usage_daily_day.
-- In app: the analyst role reads nothing here (key ids tie rows to owners; no key hashes are stored).
create table app.usage_daily (
  key_id bigint not null references app.api_keys (id) on delete cascade,
  day date not null,
  endpoint text not null,
  status_class text not null check (status_class in ('2xx', '3xx', '4xx', '429', '5xx')),
  requests bigint not null check (requests > 0),
  primary key (key_id, day, endpoint, status_class)
);
create index usage_daily_day on app.usage_daily (day);
comment on table app.usage_daily is
'Responses to each API key per UTC day, endpoint and status class, counting every answered request of a known key (refusals included), written by the admission flush (or per response with ADMISSION_FLUSH_MS=0). Kept 400 days (app.prune_counters). Read by the console''s usage page.';
comment on column app.usage_daily.key_id is 'The key that made the requests (app.api_keys.id); the rows go with the key.';
comment on column app.usage_daily.day is 'The UTC day the requests were answered on.';
comment on column app.usage_daily.endpoint is 'The route as declared, never the URL sent: "GET /api/v1/coins/{slug}", "TOOL <name>" for an MCP tool call, "unrouted" for a request answered before any route (no route matched, an unreadable or oversized body, oversized headers).';
comment on column app.usage_daily.status_class is 'The response''s status class: 2xx, 3xx, 4xx (but 429), 429 (rate limit or quota refusal), 5xx.';
comment on column app.usage_daily.requests is 'How many responses of the class the key got from the endpoint that day.';
