// The usage page's chart: responses per UTC day and status class, drawn by uPlot (served by this
// service, like this file). An enhancement: the page's table has the same numbers, and stays one
// click away once the chart is drawn. The series come from the chart element's data attributes.
import uPlot from '/console/assets/uplot.esm.js';

const WHOLE = Array.from({ length: 13 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

const box = document.getElementById('usage-chart');
if (box) draw(box);

function draw(box) {
  const days = JSON.parse(box.dataset.days ?? '[]');
  const series = JSON.parse(box.dataset.series ?? '{}');
  if (days.length === 0) return;
  // each day at 00:00 UTC, in seconds (uPlot's time scale), shown in UTC
  const xs = days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000);
  const classes = [['2xx', '#1a7f37'], ['3xx', '#57606a'], ['4xx', '#9a6700'], ['429', '#a40e26'], ['5xx', '#8250df']];
  const options = {
    width: Math.max(280, box.clientWidth),
    height: 260,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(1, max)] } },
    series: [
      { label: 'Day (UTC)', value: (u, ts) => (ts == null ? '' : new Date(ts * 1000).toISOString().slice(0, 10)) },
      ...classes.map(([label, stroke]) => ({ label, stroke, width: 2, points: { show: true, size: 5 } })),
    ],
    // whole requests only: ticks 1, 2, 5, 10, 20, 50, …
    axes: [{}, { label: 'Requests', incrs: WHOLE }],
  };
  const data = [xs, ...classes.map(([label]) => series[label] ?? xs.map(() => 0))];
  const plot = new uPlot(options, data, box);
  // drawn: the table of the same numbers is folded away (still there, one click to open)
  const table = document.getElementById('usage-days');
  if (table) table.open = false;
  let pending = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => plot.setSize({ width: Math.max(280, box.clientWidth), height: 260 }));
  });
}
