// The service's logger writing into memory: every line it emitted, raw and parsed.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.ts';

export interface CapturedLog {
  logger: Logger;
  /** everything written, as written */
  text(): string;
  /** each line parsed as JSON */
  lines(): Record<string, unknown>[];
}

export function captureLog(level: 'info' | 'debug' = 'info'): CapturedLog {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const logger = createLogger({ LOG_FORMAT: 'json', LOG_LEVEL: level }, stream);
  return {
    logger,
    text: () => text,
    lines: () => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
