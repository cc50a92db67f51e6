// The account's keys, in two sections of one shape: Data API keys (/console/keys) and MCP keys
// (/console/mcp-keys), each with the self-service plans of its scope. Create (name, plan; shown
// once), list, rename, rotate with a grace period, revoke. At most CONSOLE_MAX_KEYS working keys
// per scope.
import type { Context } from 'koa';
import { z } from 'zod';
import { createKey, MAX_ROTATION_GRACE_HOURS, revokeKey, rotateKey, type NewKey } from '../keys.ts';
import type { Sql } from '../db/client.ts';
import { publicBase } from '../http/base.ts';
import { MCP_PATH } from '../http/routes.ts';
import { choice, field, form, html, notice, shownOnce, type Html } from './html.ts';
import { fieldErrors, when, type Account, type Errors, type Kit, type PageGroup } from './kit.ts';

const keyName = z.string().trim().min(1, 'Give the key a name.').max(100, 'Use at most 100 characters.');
const keyId = z.string().regex(/^\d{1,18}$/, 'Unknown key.');

/** One section of keys: its scope, where it is, and how a key of it is used. */
interface KeySection {
  scope: NewKey['scope'];
  path: string;
  title: string;
  plans: [NewKey['plan'], ...NewKey['plan'][]];
  /** how to send a key of this scope, on the service at `base` */
  usage: (base: string) => Html;
}

const sections = (config: Kit['config']): KeySection[] => [
  {
    scope: 'data-api', path: '/keys', title: 'Data API keys', plans: config.CONSOLE_SELF_SERVICE_PLANS as KeySection['plans'],
    usage: (base) => html`<p>Send the key as <code>Authorization: Bearer &lt;key&gt;</code> to <code>${base}/api/v1/…</code> (the <a href="/docs">API guide</a>). Keep it on a server: never in a web page or an app. MCP keys are refused there.</p>`,
  },
  {
    scope: 'mcp', path: '/mcp-keys', title: 'MCP keys', plans: config.CONSOLE_SELF_SERVICE_MCP_PLANS as KeySection['plans'],
    usage: (base) => html`<p>The tool server is at <code>${base}${MCP_PATH}</code> (Model Context Protocol, Streamable HTTP). Give your MCP client that URL and the key as
<code>Authorization: Bearer &lt;key&gt;</code>, or as <code>X-API-Key: &lt;key&gt;</code>. Each tool call costs one request of the key's plan. Data API keys are refused there, and MCP keys on <code>/api/v1</code>.</p>
<pre><code>curl ${base}${MCP_PATH} -H 'Authorization: Bearer &lt;key&gt;' -H 'Content-Type: application/json' \\
  -H 'Accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'</code></pre>`,
  },
];

export const keyPages: PageGroup = (router, kit) => {
  for (const section of sections(kit.config)) keySection(router, kit, section);
};

/** The pages and forms of one section of keys. */
function keySection(router: Parameters<PageGroup>[0], { sql, config, csrf, page, signedIn, signedInForm }: Kit, { scope, path, title, plans, usage }: KeySection) {
  const createForm = z.object({ name: keyName, plan: z.enum(plans, `Choose one of: ${plans.join(', ')}.`) });
  const action = (verb = '') => `/console${path}${verb && `/${verb}`}`;

  async function keysPage(ctx: Context, who: Account, extra: { message?: Html; values?: Record<string, string>; errors?: Errors; renameError?: { key: string; name: string; error: string }; rotateError?: { key: string; error: string }; status?: number } = {}) {
    const keys = await sql<{ id: string; name: string | null; prefix: string; plan: string; created_at: Date; last_used_at: Date | null; requests_this_month: string; retires_at: Date | null }[]>`
      select * from app.console_keys(${who.owner}, ${scope})`;
    const token = csrf(ctx);
    const { values = {}, errors = {} } = extra;
    page(ctx, title, html`${extra.message ?? ''}
<h2>Your keys</h2>
${keys.length === 0 ? html`<p>No key yet.</p>` : html`<div class="table"><table><thead><tr><th>Name</th><th>Prefix</th><th>Plan</th><th>Created</th><th>Last used</th><th>Requests this month</th><th>Actions</th></tr></thead><tbody>
${keys.map((key) => html`<tr><td data-label="Name">${key.name ?? '(no name)'}</td><td data-label="Prefix"><code>${key.prefix}</code></td><td data-label="Plan">${key.plan}</td><td data-label="Created">${when(key.created_at)}</td><td data-label="Last used">${key.last_used_at ? when(key.last_used_at) : 'never'}</td><td data-label="Requests this month">${key.requests_this_month}${scope === 'data-api' ? html` <a href="/console/usage?key=${key.id}" aria-label="Usage of ${key.prefix}">Usage</a>` : ''}${key.retires_at ? html`<br><strong>Retires ${when(key.retires_at)}</strong> (rotated)` : ''}</td>
<td class="row-actions">${form(action('rename'), token, renameField(key.id, key.name, extra.renameError?.key === key.id ? extra.renameError : undefined), 'Rename')}
${key.retires_at ? '' : form(action('rotate'), token, rotateFields(key.id, extra.rotateError?.key === key.id ? extra.rotateError.error : undefined), `Rotate ${key.prefix}`)}
${form(action('revoke'), token, html`<input type="hidden" name="key" value="${key.id}">`, `Revoke ${key.prefix}`, 'danger')}</td></tr>`)}
</tbody></table></div>`}
<h2>Create a key</h2>
${keys.length >= config.CONSOLE_MAX_KEYS ? html`<p>You hold ${keys.length} keys, the most this service allows (${config.CONSOLE_MAX_KEYS}): revoke one to create another.</p>` : form(action(), token, [
    field({ name: 'name', label: 'Name', value: values.name, error: errors.name }),
    choice({ name: 'plan', label: 'Plan', options: plans.map((plan) => [plan, plan] as const), value: values.plan, error: errors.plan }),
  ], 'Create key')}
<h2>Using a key</h2>
${usage(publicBase(ctx, config))}`, extra.status ?? 200, who);
  }

  router.get(path, async (ctx) => {
    const who = await signedIn(ctx);
    if (who) await keysPage(ctx, who);
  });
  router.post(path, async (ctx) => {
    const form = await signedInForm(ctx);
    if (!form) return;
    const { fields, who } = form;
    const parsed = createForm.safeParse(fields);
    if (!parsed.success) return keysPage(ctx, who, { values: fields, errors: fieldErrors(parsed.error), status: 422 });
    const created = await sql.begin(async (tx) => {
      // one creation at a time per account, so two tabs cannot pass the limit together
      await tx`select 1 from app.owners where owner = ${who.owner} for update`;
      const [count] = await tx<{ n: number }[]>`select count(*)::int as n from app.console_keys(${who.owner}, ${scope})`;
      if (count!.n >= config.CONSOLE_MAX_KEYS) return null;
      return createKey(tx as unknown as Sql, { plan: parsed.data.plan, owner: who.owner, scope, name: parsed.data.name });
    });
    if (!created) return keysPage(ctx, who, { values: fields, errors: { name: `You hold the most keys allowed (${config.CONSOLE_MAX_KEYS}).` }, status: 409 });
    await keysPage(ctx, who, { message: newKey(created.key) });
  });
  const holder = (who: Account) => ({ owner: who.owner, scope });
  /** A key that is not a working key of this account in this section (revoked, another section's, another account's). */
  const gone = (ctx: Context, who: Account) => keysPage(ctx, who, { message: notice(`That key is not among your ${title} (revoked or rotated in another tab?); nothing was changed.`, 'error'), status: 404 });

  router.post(`${path}/rotate`, async (ctx) => {
    const form = await signedInForm(ctx);
    if (!form) return;
    const { fields, who } = form;
    const parsed = z.object({ key: keyId, grace: graceChoice }).safeParse(fields);
    if (!parsed.success) {
      const errors = fieldErrors(parsed.error);
      if (errors.key) return gone(ctx, who);
      return keysPage(ctx, who, { rotateError: { key: fields.key!, error: errors.grace! }, status: 422 });
    }
    const rotated = await rotateKey(sql, parsed.data.key, holder(who), Number(parsed.data.grace));
    if (!rotated) return gone(ctx, who);
    const old = rotated.retiresAt.getTime() <= Date.now() ? 'The old key is refused from now on.' : `The old key keeps working until ${when(rotated.retiresAt)}, then is refused.`;
    await keysPage(ctx, who, { message: newKey(rotated.key, old) });
  });
  router.post(`${path}/rename`, async (ctx) => {
    const form = await signedInForm(ctx);
    if (!form) return;
    const { fields, who } = form;
    const parsed = z.object({ key: keyId, name: keyName }).safeParse(fields);
    if (!parsed.success) {
      const errors = fieldErrors(parsed.error);
      if (errors.key) return gone(ctx, who);
      return keysPage(ctx, who, { renameError: { key: fields.key!, name: fields.name ?? '', error: errors.name! }, status: 422 });
    }
    const [row] = await sql<{ ok: boolean }[]>`select app.console_rename_key(${who.owner}, ${scope}, ${parsed.data.key}, ${parsed.data.name}) as ok`;
    if (!row!.ok) return gone(ctx, who);
    await keysPage(ctx, who, { message: notice('Key renamed.') });
  });
  router.post(`${path}/revoke`, async (ctx) => {
    const form = await signedInForm(ctx);
    if (!form) return;
    const { fields, who } = form;
    const id = keyId.safeParse(fields.key);
    const revoked = id.success ? await revokeKey(sql, id.data, holder(who)) : 0;
    if (!revoked) return gone(ctx, who);
    await keysPage(ctx, who, { message: notice('Key revoked: the API refuses it from now on.') });
  });
}

/** How long a rotated key may keep working beside its successor: [hours, label], up to MAX_ROTATION_GRACE_HOURS. */
const GRACE_CHOICES: [number, string][] = [[0, 'none: refuse it now'], [1, '1 hour'], [24, '1 day'], [72, '3 days'], [MAX_ROTATION_GRACE_HOURS, '7 days']];
const graceChoice = z.enum(GRACE_CHOICES.map(([hours]) => String(hours)) as [string, ...string[]], `Choose how long the old key keeps working: ${GRACE_CHOICES.map(([, label]) => label).join('; ')}.`);

/** A new key, shown this once with its copy button (and what became of the key it replaces). */
const newKey = (key: string, replaced?: string) => shownOnce({ id: 'new-key', heading: 'Your new key', secret: key, note: replaced });

/** A key's rotate fields: how long the old key keeps working, with the error of a refused rotation beside it. */
const rotateFields = (id: string, error?: string) => html`<input type="hidden" name="key" value="${id}">${choice({ name: 'grace', id: `grace-${id}`, label: 'Old key works for', options: GRACE_CHOICES.map(([hours, label]) => [String(hours), label] as const), value: '24', error })}`;

/** A key's rename field, with the error of a refused rename beside it. */
const renameField = (id: string, name: string | null, refused?: { name: string; error: string }) =>
  html`<input type="hidden" name="key" value="${id}">${field({ name: 'name', id: `rename-${id}`, label: 'New name', value: refused ? refused.name : (name ?? ''), error: refused?.error })}`;

