// The keys pages' markup (./api-keys.ts): a section's keys with their rename, rotate and revoke
// forms, the create form, and how a key of the section is used.
import { MAX_ROTATION_GRACE_HOURS, type NewKey } from '../keys.ts';
import { MCP_PATH } from '../http/routes.ts';
import { choice, field, form, html, shownOnce, type Html } from './html.ts';
import { when, type Errors } from './kit.ts';

/** One section of keys: its scope, where it is, and how a key of it is used. */
export interface KeySection {
  scope: NewKey['scope'];
  path: string;
  title: string;
  plans: [NewKey['plan'], ...NewKey['plan'][]];
  /** how to send a key of this scope, on the service at `base` */
  usage: (base: string) => Html;
}

export const dataApiUsage = (base: string) => html`<p>Send the key as <code>Authorization: Bearer &lt;key&gt;</code> to <code>${base}/api/v1/…</code> (the <a href="/docs">API guide</a>). Keep it on a server: never in a web page or an app. MCP keys are refused there.</p>`;

export const mcpUsage = (base: string) => html`<p>The tool server is at <code>${base}${MCP_PATH}</code> (Model Context Protocol, Streamable HTTP). Give your MCP client that URL and the key as
<code>Authorization: Bearer &lt;key&gt;</code>, or as <code>X-API-Key: &lt;key&gt;</code>. Each tool call costs one request of the key's plan. Data API keys are refused there, and MCP keys on <code>/api/v1</code>.</p>
<pre><code>curl ${base}${MCP_PATH} -H 'Authorization: Bearer &lt;key&gt;' -H 'Content-Type: application/json' \\
  -H 'Accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'</code></pre>`;

export interface KeyRow { id: string; name: string | null; prefix: string; plan: string; created_at: Date; last_used_at: Date | null; requests_this_month: string; retires_at: Date | null }

/** What the keys page shows besides the keys: a message, a refused form's values and errors (the create form's, or one key's rename or rotate). */
export interface KeysExtra {
  message?: Html;
  values?: Record<string, string>;
  errors?: Errors;
  renameError?: { key: string; name: string; error: string };
  rotateError?: { key: string; error: string };
}

/** How long a rotated key may keep working beside its successor: [hours, label], up to MAX_ROTATION_GRACE_HOURS. */
export const GRACE_CHOICES: [number, string][] = [[0, 'none: refuse it now'], [1, '1 hour'], [24, '1 day'], [72, '3 days'], [MAX_ROTATION_GRACE_HOURS, '7 days']];

/** A new key, shown this once with its copy button (and what became of the key it replaces). */
export const newKey = (key: string, replaced?: string) => shownOnce({ id: 'new-key', heading: 'Your new key', secret: key, note: replaced });

/** A key's rotate fields: how long the old key keeps working, with the error of a refused rotation beside it. */
const rotateFields = (id: string, error?: string) => html`<input type="hidden" name="key" value="${id}">${choice({ name: 'grace', id: `grace-${id}`, label: 'Old key works for', options: GRACE_CHOICES.map(([hours, label]) => [String(hours), label] as const), value: '24', error })}`;

/** A key's rename field, with the error of a refused rename beside it. */
const renameField = (id: string, name: string | null, refused?: { name: string; error: string }) =>
  html`<input type="hidden" name="key" value="${id}">${field({ name: 'name', id: `rename-${id}`, label: 'New name', value: refused ? refused.name : (name ?? ''), error: refused?.error })}`;

/** The form's action of a section: its path, and a verb under it. */
export const sectionAction = ({ path }: KeySection, verb = '') => `/console${path}${verb && `/${verb}`}`;

function keyRow(section: KeySection, key: KeyRow, csrf: string, extra: KeysExtra) {
  const action = (verb: string) => sectionAction(section, verb);
  return html`<tr><td data-label="Name">${key.name ?? '(no name)'}</td><td data-label="Prefix"><code>${key.prefix}</code></td><td data-label="Plan">${key.plan}</td><td data-label="Created">${when(key.created_at)}</td><td data-label="Last used">${key.last_used_at ? when(key.last_used_at) : 'never'}</td><td data-label="Requests this month">${key.requests_this_month}${section.scope === 'data-api' ? html` <a href="/console/usage?key=${key.id}" aria-label="Usage of ${key.prefix}">Usage</a>` : ''}${key.retires_at ? html`<br><strong>Retires ${when(key.retires_at)}</strong> (rotated)` : ''}</td>
<td class="row-actions">${form(action('rename'), csrf, renameField(key.id, key.name, extra.renameError?.key === key.id ? extra.renameError : undefined), 'Rename')}
${key.retires_at ? '' : form(action('rotate'), csrf, rotateFields(key.id, extra.rotateError?.key === key.id ? extra.rotateError.error : undefined), `Rotate ${key.prefix}`)}
${form(action('revoke'), csrf, html`<input type="hidden" name="key" value="${key.id}">`, `Revoke ${key.prefix}`, 'danger')}</td></tr>`;
}

/** A section's page: its keys, the create form (or the limit reached), how a key is used on the service at `base`. */
export function keysView(section: KeySection, keys: KeyRow[], maxKeys: number, base: string, csrf: string, extra: KeysExtra) {
  const { values = {}, errors = {} } = extra;
  return html`${extra.message ?? ''}
<h2>Your keys</h2>
${keys.length === 0 ? html`<p>No key yet.</p>` : html`<div class="table"><table><thead><tr><th>Name</th><th>Prefix</th><th>Plan</th><th>Created</th><th>Last used</th><th>Requests this month</th><th>Actions</th></tr></thead><tbody>
${keys.map((key) => keyRow(section, key, csrf, extra))}
</tbody></table></div>`}
<h2>Create a key</h2>
${keys.length >= maxKeys ? html`<p>You hold ${keys.length} keys, the most this service allows (${maxKeys}): revoke one to create another.</p>` : form(sectionAction(section), csrf, [
    field({ name: 'name', label: 'Name', value: values.name, error: errors.name }),
    choice({ name: 'plan', label: 'Plan', options: section.plans.map((plan) => [plan, plan] as const), value: values.plan, error: errors.plan }),
  ], 'Create key')}
<h2>Using a key</h2>
${section.usage(base)}`;
}
