// A graphile-worker running only send_email, in a process of its own so a test can kill it
// mid-send: node test/mail/worker_process.ts <database url> <smtp url>
import { Logger, run } from 'graphile-worker';
import { sendEmail } from '../../jobs/send_email.ts';

const runner = await run({
  connectionString: process.argv[2]!,
  noPreparedStatements: true,
  pollInterval: 50,
  logger: new Logger(() => () => {}),
  taskList: {
    send_email: sendEmail({
      SMTP_URL: process.argv[3], MAIL_FROM: 'Alarms <alarms@example.com>', SMTP_TIMEOUT_MS: 60_000, EMAIL_RETRY_BASE_MS: 60_000,
      PUBLIC_URL: 'https://api.example.com', HOST: '127.0.0.1', PORT: 3000,
    }),
  },
});
process.stdout.write('ready\n');
await runner.promise;
