// A graphile-worker running only deliver_webhook, in a process of its own so a test can kill it
// mid-delivery: node test/webhooks/worker_process.ts <database url>
import { Logger, run } from 'graphile-worker';
import { deliverWebhook } from '../../jobs/deliver_webhook.ts';

const runner = await run({
  connectionString: process.argv[2]!,
  noPreparedStatements: true,
  pollInterval: 50,
  logger: new Logger(() => () => {}),
  taskList: { deliver_webhook: deliverWebhook({ WEBHOOK_TIMEOUT_MS: 60_000, WEBHOOK_ALLOW_PRIVATE_TARGETS: true, WEBHOOK_RETRY_BASE_MS: 60_000 }) },
});
process.stdout.write('ready\n');
await runner.promise;
