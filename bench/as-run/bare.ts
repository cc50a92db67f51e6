// The ceiling of the as-run bench (bench/as-run.ts): a bare Koa process answering GET /<name> with
// the bytes last PUT to /<name>, and the same Content-Type, so that a route and its ceiling send the
// same response on the same stack with nothing of the service around it. Prints its URL on stdout.
import Koa from 'koa';

const bodies = new Map<string, { type: string; body: Buffer }>();
const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method === 'PUT') {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    bodies.set(ctx.path, { type: ctx.get('content-type') || 'application/json', body: Buffer.concat(chunks) });
    ctx.status = 204;
    return;
  }
  const kept = bodies.get(ctx.path);
  if (!kept) return void (ctx.status = 404);
  ctx.type = kept.type;
  ctx.body = kept.body;
});
const server = app.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`http://127.0.0.1:${port}\n`);
});
