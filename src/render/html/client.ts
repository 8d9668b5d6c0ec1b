/**
 * The script the HTML report runs in the browser (plain ES2020, no imports): it reads the report's
 * data from `<script type="application/json" id="k6d-data">` and draws the charts with the inlined
 * Chart.js (`globalThis.Chart`). Animations are off, so every chart is drawn when the script ends.
 *
 * When it is done it writes two attributes on `<body>` that tell a reader (and the tests) whether
 * the charts are there: `data-charts` = the number of charts made, `data-painted` = how many of
 * their canvases have visible pixels. A failure is shown in the page (`#k6d-chart-error`) and
 * written to `data-chart-error`.
 *
 * The latency chart draws the per-interval percentiles of `timeline.latency` (p50, p90, p95, p99 of
 * `http_req_duration{expected_response:true}`) when the result has them, and a second chart the
 * p95 per interval of each threshold trend; older results keep the band of p95 since the start,
 * labelled as such. `data-latency-lines` on `<body>` lists each latency line: `[label, points]`.
 *
 * Shape of the data (built by `renderHtmlReport`): `{timeline?: {points[], latency?}, percentiles: {labels[],
 * head[], base?[]}}`, values in ms, req/s and fractions as in the result JSON.
 */
export const CLIENT_SCRIPT = `
(function () {
  'use strict';
  var body = document.body;
  var made = [];
  var MAIN = 'http_req_duration{expected_response:true}';
  function color(i, alpha) {
    var c = [[31, 119, 180], [214, 39, 40], [44, 160, 44], [148, 103, 189], [255, 127, 14]][i % 5];
    return 'rgba(' + c[0] + ',' + c[1] + ',' + c[2] + ',' + alpha + ')';
  }
  function chart(id, config) {
    var canvas = document.getElementById(id);
    if (!canvas) return;
    config.options = Object.assign({ animation: false, responsive: true, maintainAspectRatio: false }, config.options);
    made.push(new Chart(canvas, config));
  }
  function xy(points, key, scale) {
    return points.filter(function (p) { return p[key] !== undefined; }).map(function (p) {
      return { x: p.tS, y: scale ? p[key] * scale : p[key] };
    });
  }
  function line(label, data, i, extra) {
    return Object.assign({ label: label, data: data, borderColor: color(i, 1), backgroundColor: color(i, 0.15),
      pointRadius: 0, borderWidth: 2, tension: 0 }, extra || {});
  }
  function timeAxis() {
    return { type: 'linear', min: 0, title: { display: true, text: 'seconds since start' } };
  }
  function axis(text, position, extra) {
    return Object.assign({ type: 'linear', position: position || 'left', beginAtZero: true,
      title: { display: true, text: text } }, extra || {});
  }
  try {
    var data = JSON.parse(document.getElementById('k6d-data').textContent);
    var points = data.timeline ? data.timeline.points : [];
    if (points.length > 0) {
      chart('chart-rps', { type: 'line', data: { datasets: [
        line('requests per second', xy(points, 'rps'), 0, { yAxisID: 'y' }),
        line('active VUs', xy(points, 'vus'), 4, { yAxisID: 'y1', borderDash: [6, 3] })
      ] }, options: { scales: { x: timeAxis(), y: axis('req/s'),
        y1: axis('VUs', 'right', { grid: { drawOnChartArea: false } }) } } });
      var latency = data.timeline.latency;
      var series = latency ? latency.metrics : [];
      var main = series.filter(function (m) { return m.metric === MAIN; })[0];
      var sets = main ? [
        line('p99 per interval', xy(main.points, 'p99'), 1, { borderDash: [2, 2] }),
        line('p95 per interval', xy(main.points, 'p95'), 1),
        line('p90 per interval', xy(main.points, 'p90'), 3),
        line('p50 per interval', xy(main.points, 'p50'), 2),
        line('mean per interval', xy(points, 'avgMs'), 0, { borderDash: [6, 3] })
      ] : [
        line('p95 since start, slowest runner', xy(points, 'p95MaxMs'), 1, { fill: '+1' }),
        line('p95 since start, fastest runner', xy(points, 'p95MinMs'), 1, { borderDash: [4, 4] }),
        line('mean per interval (exact)', xy(points, 'avgMs'), 0)
      ];
      chart('chart-latency', { type: 'line', data: { datasets: sets },
        options: { scales: { x: timeAxis(), y: axis('ms') } } });
      var others = series.filter(function (m) { return m.metric !== MAIN; });
      if (others.length > 0) {
        chart('chart-latency-trends', { type: 'line', data: { datasets: others.map(function (m, i) {
          return line(m.metric + ' p95 per interval' + (m.unit === 'ms' ? '' : ' (value)'), xy(m.points, 'p95'), i + 1);
        }) }, options: { scales: { x: timeAxis(), y: axis('ms') } } });
      }
      // What the latency charts draw, for a reader and the tests: label and point count of each line.
      body.setAttribute('data-latency-lines', JSON.stringify(sets.concat(others.length ? made[made.length - 1].data.datasets : [])
        .map(function (d) { return [d.label, d.data.length]; })));
      chart('chart-errors', { type: 'line', data: { datasets: [
        line('failed requests (%)', xy(points, 'errorRate', 100), 1, { yAxisID: 'y' }),
        Object.assign(line('failed checks', xy(points, 'checksFailed'), 3, { yAxisID: 'y1' }), { type: 'bar' })
      ] }, options: { scales: { x: timeAxis(), y: axis('% of requests'),
        y1: axis('checks', 'right', { grid: { drawOnChartArea: false } }) } } });
    }
    var pct = data.percentiles;
    if (pct && pct.labels.length > 0) {
      var sets = [{ label: 'this run', data: pct.head, backgroundColor: color(0, 0.7) }];
      if (pct.base) sets.unshift({ label: 'baseline', data: pct.base, backgroundColor: color(7, 0.5) });
      chart('chart-percentiles', { type: 'bar', data: { labels: pct.labels, datasets: sets },
        options: { scales: { y: axis('ms') } } });
    }
    var painted = 0;
    made.forEach(function (c) {
      var canvas = c.canvas;
      var pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      for (var i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) { painted++; break; }
    });
    body.setAttribute('data-charts', String(made.length));
    body.setAttribute('data-painted', String(painted));
  } catch (error) {
    var box = document.getElementById('k6d-chart-error');
    if (box) { box.hidden = false; box.textContent = 'The charts could not be drawn: ' + error; }
    body.setAttribute('data-chart-error', String(error));
  }
})();
`;
