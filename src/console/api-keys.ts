// The account's keys, in two sections of one shape: Data API keys (/console/keys) and MCP keys
// (/console/mcp-keys), each with the self-service plans of its scope. Create (name, plan; shown
// once), list, rename, rotate with a grace period, revoke. At most CONSOLE_MAX_KEYS working keys
// per scope. Markup in ./api-keys.views.ts.
import type { Context } from 'koa';
import { z } from 'zod';
import { createKey, revokeKey, rotateKey } from '../keys.ts';
import type { Sql } from '../db/client.ts';
import { publicBase } from '../http/base.ts';
import { notice } from './html.ts';
import { fieldErrors, when, type Account, type Fields, type Kit, type PageGroup } from './kit.ts';
import { dataApiUsage, GRACE_CHOICES, keysView, mcpUsage, newKey, type KeyRow, type KeysExtra, type KeySection } from './api-keys.views.ts';

const keyName = z.string().trim().min(1, 'Give the key a name.').max(100, 'Use at most 100 characters.');
const keyId = z.string().regex(/^\d{1,18}$/, 'Unknown key.');
const graceChoice = z.enum(GRACE_CHOICES.map(([hours]) => String(hours)) as [string, ...string[]], `Choose how long the old key keeps working: ${GRACE_CHOICES.map(([, label]) => label).join('; ')}.`);

const sections = (config: Kit['config']): KeySection[] => [
  { scope: 'data-api', path: '/keys', title: 'Data API keys', plans: config.CONSOLE_SELF_SERVICE_PLANS as KeySection['plans'], usage: dataApiUsage },
  { scope: 'mcp', path: '/mcp-keys', title: 'MCP keys', plans: config.CONSOLE_SELF_SERVICE_MCP_PLANS as KeySection['plans'], usage: mcpUsage },
];

/** A form of a section's keys. */
type KeyAction = (kit: Kit, section: KeySection, ctx: Context, who: Account, fields: Fields) => Promise<void>;

export const keyPages: PageGroup = (routes, kit) => {
  for (const section of sections(kit.config)) {
    const post = (verb: string, action: KeyAction) => routes.signedIn.post(`${section.path}${verb}`, (ctx, who, fields) => action(kit, section, ctx, who, fields));
    routes.signedIn.get(section.path, (ctx, who) => keysPage(kit, section, ctx, who));
    post('', create);
    post('/rotate', rotate);
    post('/rename', rename);
    post('/revoke', revoke);
  }
};

async function keysPage({ sql, config, csrf, page }: Kit, section: KeySection, ctx: Context, who: Account, extra: KeysExtra = {}, status = 200) {
  const keys = await sql<KeyRow[]>`select * from app.console_keys(${who.owner}, ${section.scope})`;
  page(ctx, section.title, keysView(section, keys, config.CONSOLE_MAX_KEYS, publicBase(ctx, config), csrf(ctx), extra), status, who);
}

/** A key that is not a working key of this account in this section (revoked, another section's, another account's). */
const gone = (kit: Kit, section: KeySection, ctx: Context, who: Account) =>
  keysPage(kit, section, ctx, who, { message: notice(`That key is not among your ${section.title} (revoked or rotated in another tab?); nothing was changed.`, 'error') }, 404);

const holder = (who: Account, { scope }: KeySection) => ({ owner: who.owner, scope });

const create: KeyAction = async (kit, section, ctx, who, fields) => {
  const { plans, scope } = section;
  const parsed = z.object({ name: keyName, plan: z.enum(plans, `Choose one of: ${plans.join(', ')}.`) }).safeParse(fields);
  if (!parsed.success) return keysPage(kit, section, ctx, who, { values: fields, errors: fieldErrors(parsed.error) }, 422);
  const limit = kit.config.CONSOLE_MAX_KEYS;
  const created = await kit.sql.begin(async (tx) => {
    // one creation at a time per account, so two tabs cannot pass the limit together
    await tx`select 1 from app.owners where owner = ${who.owner} for update`;
    const [count] = await tx<{ n: number }[]>`select count(*)::int as n from app.console_keys(${who.owner}, ${scope})`;
    if (count!.n >= limit) return null;
    return createKey(tx as unknown as Sql, { plan: parsed.data.plan, owner: who.owner, scope, name: parsed.data.name });
  });
  if (!created) return keysPage(kit, section, ctx, who, { values: fields, errors: { name: `You hold the most keys allowed (${limit}).` } }, 409);
  await keysPage(kit, section, ctx, who, { message: newKey(created.key) });
};

const rotate: KeyAction = async (kit, section, ctx, who, fields) => {
  const parsed = z.object({ key: keyId, grace: graceChoice }).safeParse(fields);
  if (!parsed.success) {
    const errors = fieldErrors(parsed.error);
    if (errors.key) return gone(kit, section, ctx, who);
    return keysPage(kit, section, ctx, who, { rotateError: { key: fields.key!, error: errors.grace! } }, 422);
  }
  const rotated = await rotateKey(kit.sql, parsed.data.key, holder(who, section), Number(parsed.data.grace));
  if (!rotated) return gone(kit, section, ctx, who);
  const old = rotated.retiresAt.getTime() <= Date.now() ? 'The old key is refused from now on.' : `The old key keeps working until ${when(rotated.retiresAt)}, then is refused.`;
  await keysPage(kit, section, ctx, who, { message: newKey(rotated.key, old) });
};

const rename: KeyAction = async (kit, section, ctx, who, fields) => {
  const parsed = z.object({ key: keyId, name: keyName }).safeParse(fields);
  if (!parsed.success) {
    const errors = fieldErrors(parsed.error);
    if (errors.key) return gone(kit, section, ctx, who);
    return keysPage(kit, section, ctx, who, { renameError: { key: fields.key!, name: fields.name ?? '', error: errors.name! } }, 422);
  }
  const [row] = await kit.sql<{ ok: boolean }[]>`select app.console_rename_key(${who.owner}, ${section.scope}, ${parsed.data.key}, ${parsed.data.name}) as ok`;
  if (!row!.ok) return gone(kit, section, ctx, who);
  await keysPage(kit, section, ctx, who, { message: notice('Key renamed.') });
};

const revoke: KeyAction = async (kit, section, ctx, who, fields) => {
  const id = keyId.safeParse(fields.key);
  const revoked = id.success ? await revokeKey(kit.sql, id.data, holder(who, section)) : 0;
  if (!revoked) return gone(kit, section, ctx, who);
  await keysPage(kit, section, ctx, who, { message: notice('Key revoked: the API refuses it from now on.') });
};
