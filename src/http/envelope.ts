// The response envelopes: {data, meta} and, for paginated lists, {data, links, meta}.
import { query } from './validation.ts';

export const paginationQuery = {
  page: query.int(1, 1_000_000).optional().default(1),
  // The plan's cap (100 or 250) is checked after admission, since it depends on the key.
  per_page: query.int(1, 250).optional(),
};

export interface Page {
  page: number;
  perPage: number;
}

export function paginated<T>(url: URL, page: Page, total: number, data: T[], meta: Record<string, unknown> = {}) {
  const lastPage = Math.max(1, Math.ceil(total / page.perPage));
  const link = (target: number) => {
    const next = new URL(url);
    next.searchParams.set('page', String(target));
    next.searchParams.set('per_page', String(page.perPage));
    return `${next.pathname}${next.search}`;
  };
  const from = data.length ? (page.page - 1) * page.perPage + 1 : null;
  return {
    data,
    links: {
      first: link(1),
      last: link(lastPage),
      prev: page.page > 1 ? link(Math.min(page.page - 1, lastPage)) : null,
      next: page.page < lastPage ? link(page.page + 1) : null,
    },
    meta: {
      current_page: page.page,
      from,
      last_page: lastPage,
      per_page: page.perPage,
      to: from === null ? null : from + data.length - 1,
      total,
      ...meta,
    },
  };
}

export type Paginated = ReturnType<typeof paginated>;
