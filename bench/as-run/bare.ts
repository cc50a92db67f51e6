// The ceiling of the as-run bench (bench/as-run.ts): a bare Koa process answering GET /<name> with
// the bytes last PUT to /<name>, and the headers the PUT listed in X-Answer-Headers (JSON pairs; at
// least the Content-Type), so that a route and its ceiling send the same response on the same stack
// with nothing of the service around it. Prints its URL on stdout.
import Koa from 'koa';

// set by Node itself on every answer
const NODE_SETS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
const bodies = new Map<string, { headers: [string, string][]; body: Buffer }>();
const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method === 'PUT') {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const listed = ctx.get('x-answer-headers');
    const headers: [string, string][] = listed ? JSON.parse(listed) : [['content-type', ctx.get('content-type') || 'application/json']];
    bodies.set(ctx.path, { headers: headers.filter(([name]) => !NODE_SETS.has(name.toLowerCase())), body: Buffer.concat(chunks) });
    ctx.status = 204;
    return;
  }
  const kept = bodies.get(ctx.path);
  if (!kept) return void (ctx.status = 404);
  for (const [name, value] of kept.headers) ctx.set(name, value);
  ctx.body = kept.body;
});
const server = app.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`http://127.0.0.1:${port}\n`);
});
