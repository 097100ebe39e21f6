// The session timeline: token usage over the session's log (uPlot), the threshold rungs and the usable window as
// dashed lines, each writer run as a bar in a lane strip under the plot (coloured by outcome, facts on hover), and a
// vertical marker at each rebuild.
import uPlot from '/vendor/uPlot.esm.js';
import { el, groupDigits, percent, timeOf } from './format.js';

const LANE_HEIGHT = 22;

function guideLines(session) {
  return [
    ...session.thresholds.map((tokens, i) => ({ tokens, label: `rung ${i + 1} · ${groupDigits(tokens)}`, color: '#c98a1b' })),
    { tokens: session.usableWindow, label: `usable window · ${groupDigits(session.usableWindow)}`, color: '#c0392b' },
  ];
}

// Draws the rungs and the window across the plot area, on uPlot's own canvas, after the series.
function drawGuides(session) {
  return (u) => {
    const { ctx, bbox } = u;
    const ratio = devicePixelRatio;
    ctx.save();
    ctx.font = `${11 * ratio}px system-ui, sans-serif`;
    ctx.textAlign = 'right';
    ctx.lineWidth = 1.5 * ratio;
    for (const guide of guideLines(session)) {
      const y = Math.round(u.valToPos(guide.tokens, 'y', true));
      ctx.strokeStyle = guide.color;
      ctx.setLineDash([6 * ratio, 4 * ratio]);
      ctx.beginPath();
      ctx.moveTo(bbox.left, y);
      ctx.lineTo(bbox.left + bbox.width, y);
      ctx.stroke();
      ctx.fillStyle = guide.color;
      ctx.fillText(guide.label, bbox.left + bbox.width - 4 * ratio, y - 4 * ratio);
    }
    ctx.restore();
  };
}

// Lanes so that runs that overlap in the log never share one.
function laneOf(writers) {
  const ends = [];
  return writers.map((w) => {
    let lane = ends.findIndex((end) => end < w.fromSeq);
    if (lane < 0) lane = ends.length;
    ends[lane] = w.toSeq;
    return lane;
  });
}

function writerFacts(w) {
  const seconds = w.startedAt !== null && w.settledAt !== null ? ` · ${((w.settledAt - w.startedAt) / 1000).toFixed(1)} s` : '';
  return [
    ['', `${w.label} · ${w.outcome}${seconds}`],
    ['mode', `${w.mode ?? '–'} (trigger ${w.trigger ?? '–'})`],
    ['covers up to', w.coversUpTo ?? '–'],
    ['LLM calls', String(w.llmCalls)],
    ['cache hit rate', w.cacheHitRate === null ? '– (no reply)' : `${percent(w.cacheHitRate)} (${groupDigits(w.cachedTokens)} of ${groupDigits(w.promptTokens)} prompt tokens)`],
    ['failure', w.failure === null ? '–' : `${w.failure.kind}${w.failure.message !== null ? `: ${w.failure.message}` : ''}`],
    ['log', `#${w.fromSeq} → #${w.toSeq}, started ${timeOf(w.startedAt)}`],
  ];
}

function tooltip() {
  let tip = document.getElementById('tooltip');
  if (tip === null) {
    tip = el('div', { id: 'tooltip', class: 'tooltip', role: 'tooltip' });
    document.body.append(tip);
  }
  return tip;
}

function showTip(event, rows) {
  const tip = tooltip();
  tip.replaceChildren(...rows.map(([key, value]) => el('div', { class: key === '' ? 'tip-title' : 'tip-row' }, key === '' ? value : [el('span', { class: 'tip-key', text: key }), ` ${value}`])));
  tip.style.display = 'block';
  const x = Math.min(event.clientX + 14, innerWidth - tip.offsetWidth - 8);
  const y = Math.min(event.clientY + 14, innerHeight - tip.offsetHeight - 8);
  tip.style.left = `${x + scrollX}px`;
  tip.style.top = `${y + scrollY}px`;
}

function hideTip() {
  tooltip().style.display = 'none';
}

// Places the writer bars and the rebuild markers where uPlot put the x values.
function placeOverlays(u, session, strip, markers) {
  const lanes = laneOf(session.writers);
  strip.style.marginLeft = `${u.over.offsetLeft}px`;
  strip.style.width = `${u.over.clientWidth}px`;
  strip.style.height = `${Math.max(1, Math.max(0, ...lanes) + 1) * LANE_HEIGHT}px`;
  strip.replaceChildren(
    ...session.writers.map((w, i) => {
      const left = u.valToPos(w.fromSeq, 'x');
      const width = Math.max(u.valToPos(w.toSeq, 'x') - left, 6);
      const bar = el('div', {
        class: `writer-bar outcome-${w.outcome}`,
        'data-writer': w.writerId,
        'data-outcome': w.outcome,
        tabindex: 0,
        text: w.label,
        onmouseenter: (event) => showTip(event, writerFacts(w)),
        onmousemove: (event) => showTip(event, writerFacts(w)),
        onmouseleave: hideTip,
        onfocus: (event) => showTip({ clientX: event.target.getBoundingClientRect().left, clientY: event.target.getBoundingClientRect().bottom }, writerFacts(w)),
        onblur: hideTip,
      });
      bar.style.left = `${left}px`;
      bar.style.width = `${width}px`;
      bar.style.top = `${lanes[i] * LANE_HEIGHT}px`;
      return bar;
    }),
  );
  for (const old of markers) old.remove();
  markers.length = 0;
  for (const r of session.rebuilds) {
    const marker = el('div', { class: `rebuild-marker rebuild-${r.outcome}`, 'data-rebuild': r.number }, el('span', { class: 'rebuild-label', text: `⟲ rebuild ${r.number} · ${r.outcome}` }));
    marker.style.left = `${u.valToPos(r.seq, 'x')}px`;
    const facts = [
      ['', `rebuild ${r.number} · ${r.outcome}`],
      ['reason', r.reason],
      ['boundary tokens', groupDigits(r.tokens)],
      ...(r.fit !== null && r.fit !== undefined
        ? [['fitted', `${groupDigits(r.fit.total)} of a usable ${groupDigits(r.fit.limit)}${r.fit.fits ? '' : ' (did not fit)'}${r.fit.steps.length > 0 ? ` · ${r.fit.steps.join(', ')}` : ''}`]]
        : []),
      ['log', `asked at #${r.requestedSeq}, ended at #${r.seq} (${timeOf(r.at)})`],
      ...(r.detail !== null ? [['detail', r.detail]] : []),
    ];
    marker.addEventListener('mouseenter', (event) => showTip(event, facts));
    marker.addEventListener('mouseleave', hideTip);
    u.over.append(marker);
    markers.push(marker);
  }
}

// Builds the chart in `container`; returns { update(session), destroy() }.
export function timelineChart(container, initial) {
  let session = initial;
  const plot = el('div', { class: 'plot' });
  const strip = el('div', { class: 'writer-lanes', 'aria-label': 'writer runs' });
  container.append(plot, el('div', { class: 'lanes-caption muted', text: 'writer runs (hover for details)' }), strip);
  const markers = [];

  const dataOf = (s) => [s.usage.seq, s.usage.tokens];
  const yMax = (s) => Math.max(s.usableWindow * 1.08, ...s.usage.tokens.map((t) => t * 1.05), 1);
  const xRange = (s) => [1, Math.max(2, s.lastSeq)];

  const options = {
    width: Math.max(320, container.clientWidth),
    height: 320,
    cursor: { drag: { x: false, y: false } },
    scales: {
      x: { time: false, range: () => xRange(session) },
      y: { range: () => [0, yMax(session)] },
    },
    axes: [
      { label: 'session log record #', stroke: '#555', grid: { stroke: '#eee' } },
      { label: 'tokens', stroke: '#555', size: 70, grid: { stroke: '#eee' }, values: (_u, ticks) => ticks.map((t) => groupDigits(t)) },
    ],
    series: [
      { label: 'record', value: (_u, v, _series, idx) => (v === null ? '–' : `#${v} · ${timeOf(session.usage.at[idx] ?? null)}`) },
      {
        label: 'tokens in context',
        stroke: '#2f6fdb',
        width: 2,
        fill: 'rgba(47,111,219,0.08)',
        paths: uPlot.paths.stepped({ align: 1 }),
        points: { show: true, size: 5 },
        value: (_u, v) => groupDigits(v),
      },
    ],
    hooks: {
      // uPlot applies new data and sizes in a batch and draws once its scales are set: the overlays follow each draw.
      draw: [drawGuides({ get thresholds() { return session.thresholds; }, get usableWindow() { return session.usableWindow; } }), (u) => placeOverlays(u, session, strip, markers)],
    },
  };
  const u = new uPlot(options, dataOf(session), plot);
  const resize = () => u.setSize({ width: Math.max(320, container.clientWidth), height: 320 });
  window.addEventListener('resize', resize);
  return {
    update(next) {
      session = next;
      u.setData(dataOf(session));
    },
    destroy() {
      window.removeEventListener('resize', resize);
      hideTip();
      u.destroy();
    },
  };
}
