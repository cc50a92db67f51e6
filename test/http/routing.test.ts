// The API's routes are split into one router per first path segment (src/http/routes.ts, apiRouter):
// a request is matched as @koa/router matched it in one router, whatever segment it names.
import test from 'ava';
import { z } from 'zod';
import { defineRoute } from '../../src/http/routes.ts';
import { testApi, useApi } from '../helpers/http.ts';
import { fixtureRoutes } from './fixtures.ts';

const handles = useApi(test, { routes: fixtureRoutes });

test('routes of several segments answer, in any case and with a trailing slash, as one router answered them', async (t) => {
  const key = await handles.api.key({ plan: 'pro' });
  for (const path of ['/api/v1/ping', '/API/V1/PING', '/api/v1/Ping/', '/api/v1/fixtures/items/7', '/api/v1/FIXTURES/items/7/']) {
    const response = await handles.api.get(path, key);
    t.is(response.status, 200, path);
  }
  t.is((await handles.api.get('/api/v1/fixtures/items/7?per_page=5', key)).body.data.length, 5);
  // the segment names the router, the rest of the path must still match one of its routes
  const missing = await handles.api.get('/api/v1/fixtures/nothing-here', key);
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'not_found');
});

test('an unknown segment, the prefix alone and a path outside it are the 404 envelope; the HTML reference under the prefix still answers', async (t) => {
  const key = await handles.api.key();
  for (const path of ['/api/v1/no-such-group', '/api/v1', '/api/v1/', '/api/v1//ping', '/api/v1ping', '/elsewhere']) {
    const response = await handles.api.get(path, key);
    t.is(response.status, 404, path);
    t.is(response.body.error?.code, 'not_found', path);
  }
  t.is((await handles.api.get('/api/v1/docs')).status, 200);
});

test('a route whose first segment is a parameter is refused at start-up (the routers are picked by that segment)', async (t) => {
  const route = defineRoute({
    method: 'get', path: '/{anything}/x', operationId: 'anything', tag: 'Fixtures', plan: 'free', query: z.object({}),
    params: z.object({ anything: z.string() }), summary: 'Not allowed.', handler: async () => ({ data: {} }),
  });
  await t.throwsAsync(testApi(handles.db, { routes: [route] }), { message: /\/\{anything\}\/x: a route's first path segment must be literal/ });
});
