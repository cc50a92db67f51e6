// Widget keys: publishable (mdw_ and 32 base64url characters, 24 random bytes), made in the
// console. Stored like API keys (looked up and admitted by their SHA-256 in app.api_keys, of scope
// widget) so that revocation, quotas and counting are the API keys' own; and stored as they are in
// app.widget_keys too, because a publishable key is in the source of every page that embeds it and
// the console's widget builder shows it in each snippet it writes.
import { randomBytes } from 'node:crypto';
import type { Sql } from '../db/client.ts';
import { hashKey } from '../keys.ts';
import type { WidgetPlanName } from '../plans.ts';

export interface NewWidgetKey {
  owner: string;
  plan: WidgetPlanName;
  name: string;
  /** canonical origins (src/widgets/origins.ts canonicalOrigin), 1 to 20 */
  origins: string[];
}

export async function createWidgetKey(sql: Sql, { owner, plan, name, origins }: NewWidgetKey): Promise<{ id: number; key: string }> {
  const key = `mdw_${randomBytes(24).toString('base64url')}`;
  const [row] = await sql<{ id: string }[]>`
    select app.console_create_widget_key(${owner}, ${hashKey(key)}, ${key}, ${plan}, ${name}, ${origins}::text[]) as id`;
  return { id: Number(row!.id), key };
}
