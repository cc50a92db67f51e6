// TA-Lib's C code as a reference, through the `talib` addon. The addon is built against the
// machine's Node 20 headers, so this script runs under that Node (/usr/bin/node, or TALIB_NODE),
// never inside the Node 22 test process: it reads one JSON request on stdin and writes one reply.
//   request: {calls: [{name, inputs: {inReal?, high?, low?, close?, volume?}, options?}], repeat?}
//   reply:   [{begIndex, result: {outReal: [...], ...}, msPerCall}] in the order of the calls
// With `repeat`, each call runs that many times after a warm-up and msPerCall is the mean time
// of one call inside this process (the benchmark's C-side figure).
'use strict';
const talib = require('talib');

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => (input += chunk));
process.stdin.on('end', () => {
  const request = JSON.parse(input);
  const repeat = request.repeat ?? 0;
  const replies = request.calls.map((call) => {
    const length = (call.inputs.inReal ?? call.inputs.close).length;
    const spec = { name: call.name, startIdx: 0, endIdx: length - 1, ...call.inputs, ...(call.options ?? {}) };
    const run = () => {
      const out = talib.execute(spec);
      if (out.error) throw new Error(`${call.name}: ${out.error}`);
      return out;
    };
    const out = run();
    let msPerCall = null;
    if (repeat > 0) {
      for (let i = 0; i < Math.min(repeat, 20); i++) run();
      const started = process.hrtime.bigint();
      for (let i = 0; i < repeat; i++) run();
      msPerCall = Number(process.hrtime.bigint() - started) / 1e6 / repeat;
    }
    return { begIndex: out.begIndex, result: out.result, msPerCall };
  });
  process.stdout.write(JSON.stringify(replies));
});
