// A Query (one statement at a time, on one reserved connection, outside any transaction) over a
// test database, for the code that must call refresh_continuous_aggregate.
import type { Query } from '../../src/sources/aggregates.ts';
import type { TestDatabase } from './database.ts';

export async function withQuery<T>(db: TestDatabase, work: (query: Query) => Promise<T>): Promise<T> {
  const reserved = await db.sql.reserve();
  try {
    return await work(async (text, values = []) => (await reserved.unsafe(text, values as never[])) as Record<string, unknown>[]);
  } finally {
    reserved.release();
  }
}
