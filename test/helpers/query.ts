// A Query (one statement at a time, on one reserved connection, outside any transaction) over a
// test database, for the code that must call refresh_continuous_aggregate.
import { type Query, withReservedQuery } from '../../src/db/query.ts';
import type { TestDatabase } from './database.ts';

export const withQuery = <T>(db: TestDatabase, work: (query: Query) => Promise<T>): Promise<T> => withReservedQuery(db.sql, work);
