// The report page's style sheet and its script (which draws the charts with Chart.js). Plain strings.

// Tables: a title above the table (never inside the scrolling box, so it is never cut), a scroll box that
// takes keyboard focus (for a table wider than a wide window), and below 700 px each row as a card of
// "column value" lines, so that no table needs to scroll at a phone's width.
export const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1280px;padding:16px 24px;color:#1b1f24;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 4px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 4px}figure h3,figure h4{font-size:13px;margin:0}
.meta{color:#57606a}.finding{color:#333;margin:4px 0 10px;max-width:980px}
a{color:#0969da}p,li,summary,code,.caption{overflow-wrap:anywhere}
ul.verdicts{list-style:none;padding:0}ul.verdicts li{padding:4px 8px;margin:3px 0;border-left:4px solid #8c959f;background:#f6f8fa;font-family:ui-monospace,monospace;font-size:13px}
ul.verdicts li.ok{border-color:#1a7f37}ul.verdicts li.bad{border-color:#cf222e}ul.verdicts li.skip{border-color:#9a6700;border-left-style:dashed}
ul.verdicts li.none{border-left-style:dotted}.file{font-weight:600}
.legend{font-size:12px;color:#57606a;margin:4px 0}.legend span{display:inline-block;margin-right:14px;padding-left:8px;border-left:4px solid}
.legend .ok{border-color:#1a7f37}.legend .bad{border-color:#cf222e}.legend .skip{border-color:#9a6700;border-left-style:dashed}
.notice{border:1px solid #9a6700;background:#fff8c5;padding:6px 10px;border-radius:6px}
.pair{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px;margin:10px 0}
figure{margin:0;padding:10px 12px;border:1px solid #d0d7de;border-radius:6px;background:#fff;min-width:0}
figure.seed{background:#fbfaf7;border-style:dashed}
.head{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:baseline;gap:2px 12px;margin-bottom:6px}
.tag{font-size:11px;color:#57606a;white-space:nowrap}
.chart{position:relative;height:260px;min-width:0}canvas{max-width:100%}figcaption{font-size:12px;color:#57606a;margin-top:6px}
.table{margin:12px 0}.caption{font-weight:600;margin:0 0 4px}.cut{font-size:12px;color:#57606a;margin:4px 0}
.scroll{overflow-x:auto;max-width:100%}.scroll:focus-visible{outline:2px solid #0969da;outline-offset:2px}
table{border-collapse:collapse;font-size:13px}
th,td{padding:3px 5px;border-bottom:1px solid #eaeef2;text-align:left;white-space:nowrap}
th{background:#f6f8fa;white-space:normal;vertical-align:bottom;min-width:4ch}td.w{white-space:normal;overflow-wrap:anywhere;min-width:12ch}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}tbody tr:nth-child(even){background:#fafbfc}
table.host th{background:none;font-weight:400;white-space:normal;overflow-wrap:anywhere}table.host td{white-space:normal;overflow-wrap:anywhere}
.skipped{color:#8a5c00}.absent{color:#57606a;font-style:italic}
@media (max-width:700px){
.pair{grid-template-columns:minmax(0,1fr)}body{padding:8px 10px}
table.grid,table.grid tbody,table.grid tr{display:block}
table.grid thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
table.grid tr{border:1px solid #d0d7de;border-radius:4px;margin:6px 0;padding:4px 8px}
table.grid td{display:flex;justify-content:space-between;gap:12px;border:0;padding:1px 0;white-space:normal;text-align:right;overflow-wrap:anywhere;min-width:0}
table.grid td::before{content:attr(data-label);color:#57606a;text-align:left;flex:none;max-width:55%}
table.grid td:empty{display:none}
}
`;

// Runs in the page: turns the specs into Chart.js charts, marks each canvas once it has been drawn
// (data-drawn) and the body with how many charts there are (data-charts).
export const PAGE_SCRIPT = `
(function () {
  var specs = JSON.parse(document.getElementById('sockbuf-charts').textContent);
  var ours = ['#0969da', '#cf222e', '#1a7f37', '#8250df', '#bc4c00', '#0598bc', '#bf3989'];
  var muted = ['#8c7a5b', '#b89968', '#6e7781', '#a0917a'];
  function compact(v) {
    var a = Math.abs(v);
    if (a >= 1e9) return v / 1e9 + 'G';
    if (a >= 1e6) return v / 1e6 + 'M';
    if (a >= 1e3) return v / 1e3 + 'k';
    return Number(v.toPrecision(4)).toLocaleString('en-US');
  }
  function mantissa(v) { return v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9)); }
  function near(a, b) { return Math.abs(a - b) < 1e-6; }
  // Logarithmic axes: ticks at 1, 2 and 5 x powers of ten when the axis has room for their labels, else
  // at the powers of ten, else at every second, third ... power: labels never overlap.
  function log(axis, horizontal) {
    axis.type = 'logarithmic';
    axis.ticks = { maxRotation: 0, autoSkip: false, callback: compact };
    axis.afterBuildTicks = function (scale) {
      var nice = scale.ticks.filter(function (t) {
        var m = mantissa(t.value);
        return near(m, 1) || near(m, 2) || near(m, 5);
      });
      var ones = nice.filter(function (t) { return near(mantissa(t.value), 1); });
      var widest = 1;
      nice.forEach(function (t) { widest = Math.max(widest, compact(t.value).length); });
      var room = Math.max(2, Math.floor(horizontal ? scale.width / (widest * 7 + 14) : scale.height / 24));
      var pick = nice;
      var base = ones.length >= 2 ? ones : nice;
      for (var step = 1; pick.length > room; step++) {
        pick = base.filter(function (t, i) { return i % step === 0; });
      }
      if (pick.length) scale.ticks = pick;
    };
    return axis;
  }
  // Long names (a reader's, a series') are cut on the axis and in the legend, never the plot's room:
  // the tooltip shows each whole.
  function cut(text, n) { text = String(text); return text.length > n ? text.slice(0, n - 1) + '\u2026' : text; }
  function categoryTicks() {
    return { maxRotation: 0, autoSkip: true, callback: function (v) { return cut(this.getLabelForValue(v), 14); } };
  }
  var legendLabels = {
    generateLabels: function (chart) {
      var items = Chart.defaults.plugins.legend.labels.generateLabels(chart);
      items.forEach(function (i) { i.text = cut(i.text, 28); });
      return items;
    }
  };
  var drawn = { id: 'sockbufDrawn', afterRender: function (chart) { chart.canvas.setAttribute('data-drawn', '1'); } };
  specs.forEach(function (s) {
    var colors = s.seed ? muted : ours;
    var datasets = s.datasets.map(function (d, i) {
      var c = colors[i % colors.length];
      return Object.assign({}, d, { backgroundColor: c, borderColor: c, borderWidth: s.type === 'line' ? 2 : 0, pointRadius: 3, spanGaps: true });
    });
    var x = { title: { display: true, text: s.xTitle } };
    if (s.xLog) x = log(x, true); else if (s.type === 'line') x.type = 'linear'; else x.ticks = categoryTicks();
    var y = { title: { display: true, text: s.yTitle }, beginAtZero: !s.yLog, ticks: { callback: compact } };
    if (s.yLog) y = log(y, false);
    try {
      new Chart(document.getElementById(s.id), {
        type: s.type,
        data: { labels: s.labels, datasets: datasets },
        options: {
          animation: false, responsive: true, maintainAspectRatio: false,
          plugins: { legend: { display: datasets.length > 1 || !!s.seed, position: 'bottom', labels: legendLabels } },
          scales: { x: x, y: y }
        },
        plugins: [drawn]
      });
    } catch (e) {
      console.error('chart ' + s.id + ' failed: ' + e.message);
    }
  });
  document.body.setAttribute('data-charts', String(specs.length));
})();
`;
