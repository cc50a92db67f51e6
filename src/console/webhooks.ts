// The account's webhook endpoints: register (the API's validation and private-target check), the
// signing secret shown once, rotate it, send a test event, re-enable, delete; and each endpoint's
// delivery log (every event and attempt: time, HTTP status or error, duration, the start of the
// receiver's answer) with a Redeliver button. The same SQL functions as /api/v1/webhooks
// (the webhook-endpoint core, src/webhooks/endpoints.ts); rotating and redelivering are console-only (920_console_alarms_webhooks.sql).
// Markup in ./webhooks.views.ts.
import type { Context } from 'koa';
import {
  createWebhookEndpoint, deleteWebhookEndpoint, enableWebhookEndpoint, endpointBody, getWebhookEndpoint, listWebhookDeliveries,
  listWebhookEndpoints, sendWebhookTest,
} from '../webhooks/endpoints.ts';
import { html, navigation, notice, shownOnce, type Html } from './html.ts';
import { fieldErrors, pageNumber, refusal, rowId, type Account, type Errors, type Fields, type Kit, type PageGroup } from './kit.ts';
import { endpointsView, logView, PER_PAGE, type DeliveryLog, type Endpoint } from './webhooks.views.ts';

const GONE = 'That endpoint does not exist (deleted in another tab?); nothing was changed.';

/** What a signed secret is for, said where it is shown. */
const SECRET_NOTE = 'Every delivery carries X-Service-Signature: t=<unix time>,v1=<HMAC-SHA256 of "<t>.<raw body>" keyed with this secret, hex>.';

/** An action on one endpoint of the account: the core's operation (or the console's own SQL), and the message once done. */
interface EndpointAction<T> { run: (kit: Kit, owner: string, id: string) => Promise<unknown>; done: (result: T, id: string) => Html }

const ENDPOINT_ACTIONS: Record<string, EndpointAction<never>> = {
  test: {
    run: ({ sql }, owner, id) => sendWebhookTest(sql, owner, id),
    done: (_, id) => notice(html`A test event is queued, signed like any other. <a href="/console/webhooks/${id}">See it in the delivery log</a>.`),
  },
  rotate: {
    run: async ({ sql }, owner, id) => (await sql<{ data: unknown }[]>`select app.rotate_webhook_secret(${owner}, ${id}) as data`)[0]!.data,
    done: (rotated: { url: string; secret: string }) => shownOnce({ id: 'new-secret', heading: `The new signing secret of ${rotated.url}`, secret: rotated.secret, note: `The old secret signs nothing from now on. ${SECRET_NOTE}` }),
  },
  enable: {
    run: ({ sql }, owner, id) => enableWebhookEndpoint(sql, owner, id),
    done: () => notice('Endpoint re-enabled: new events are delivered to it again (those raised while it was disabled are not).'),
  },
  delete: {
    run: ({ sql }, owner, id) => deleteWebhookEndpoint(sql, owner, id),
    done: () => notice('Endpoint deleted with its delivery log; nothing more is sent to it.'),
  },
};

export const webhookPages: PageGroup = (routes, kit) => {
  navigation('/console/webhooks', 'Webhooks');
  routes.signedIn.get('/webhooks', (ctx, who) => endpointsPage(kit, ctx, who));
  routes.signedIn.post('/webhooks', (ctx, who, fields) => addEndpoint(kit, ctx, who, fields));
  for (const [name, action] of Object.entries(ENDPOINT_ACTIONS)) {
    routes.signedIn.post(`/webhooks/:id/${name}`, (ctx, who) => actOnEndpoint(kit, ctx, who, action));
  }
  routes.signedIn.get('/webhooks/:id', (ctx, who) => logPage(kit, ctx, who));
  routes.signedIn.post('/webhooks/:id/redeliver', (ctx, who, fields) => redeliver(kit, ctx, who, fields));
};

async function endpointsPage({ sql, csrf, page }: Kit, ctx: Context, who: Account, extra: { message?: Html; values?: Fields; errors?: Errors } = {}, status = 200) {
  page(ctx, 'Webhooks', endpointsView(await listWebhookEndpoints<Endpoint>(sql, who.owner), csrf(ctx), extra), status, who);
}

const gonePage = (kit: Kit, ctx: Context, who: Account) => endpointsPage(kit, ctx, who, { message: notice(GONE, 'error') }, 404);

async function addEndpoint(kit: Kit, ctx: Context, who: Account, fields: Fields) {
  // one box per event kind; a form sends each ticked one under the name "events"
  const parsed = endpointBody.safeParse({ url: fields.url, events: fields.events ? [fields.events] : [] });
  if (!parsed.success) return endpointsPage(kit, ctx, who, { values: fields, errors: { ...fieldErrors(parsed.error), ...(fields.events ? {} : { events: 'Choose at least one event.' }) } }, 422);
  let created: Awaited<ReturnType<typeof createWebhookEndpoint>>;
  try {
    created = await createWebhookEndpoint(kit.sql, kit.config, who.owner, parsed.data);
  } catch (error) {
    const refused = refusal(error);
    return endpointsPage(kit, ctx, who, { values: fields, errors: refused.errors }, refused.status);
  }
  await endpointsPage(kit, ctx, who, { message: shownOnce({ id: 'new-secret', heading: `The signing secret of ${created.url}`, secret: created.secret, note: SECRET_NOTE }) });
}

async function actOnEndpoint<T>(kit: Kit, ctx: Context, who: Account, { run, done }: EndpointAction<T>) {
  const id = rowId.safeParse(ctx.params.id);
  if (!id.success) return gonePage(kit, ctx, who);
  let result: T;
  try {
    result = (await run(kit, who.owner, id.data)) as T;
  } catch (error) {
    const refused = refusal(error);
    return endpointsPage(kit, ctx, who, { message: notice(refused.status === 404 ? GONE : Object.values(refused.errors)[0]!, 'error') }, refused.status);
  }
  await endpointsPage(kit, ctx, who, { message: done(result, id.data) });
}

/** One endpoint's delivery log (the path's id), or the endpoints with a 404 when it is not this account's. */
async function logPage(kit: Kit, ctx: Context, who: Account, message?: Html, status = 200) {
  const { sql, csrf, page } = kit;
  const id = rowId.safeParse(ctx.params.id);
  const endpoint = id.success ? await getWebhookEndpoint<Endpoint>(sql, who.owner, id.data) : null;
  if (!endpoint) return gonePage(kit, ctx, who);
  const pageNo = pageNumber(ctx.query.page);
  const log = await listWebhookDeliveries<DeliveryLog['data'][number]>(sql, who.owner, endpoint.id, pageNo, PER_PAGE);
  page(ctx, 'Delivery log', logView(endpoint, log, pageNo, csrf(ctx), message), status, who);
}

async function redeliver(kit: Kit, ctx: Context, who: Account, fields: Fields) {
  const [endpointId, deliveryId] = [rowId.safeParse(ctx.params.id), rowId.safeParse(fields.delivery)];
  if (!endpointId.success) return gonePage(kit, ctx, who);
  if (!deliveryId.success) return logPage(kit, ctx, who, notice('That delivery does not exist; nothing was sent.', 'error'), 404);
  try {
    await kit.sql`select app.redeliver_webhook(${who.owner}, ${endpointId.data}, ${deliveryId.data})`;
  } catch (error) {
    const refused = refusal(error);
    return logPage(kit, ctx, who, notice(Object.values(refused.errors)[0]!, 'error'), refused.status);
  }
  await logPage(kit, ctx, who, notice('Delivery queued again: the same event (same id), signed anew, with retries of its own.'));
}
