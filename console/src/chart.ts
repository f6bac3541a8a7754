import { h, svg } from './dom.ts';

// A line chart in plain SVG: one line per series over evenly spaced buckets, a y axis from 0 to
// a round maximum, and the first, middle and last bucket labelled. Colours come from the
// stylesheet (class `series-<key>`), so the chart needs no inline style.

export interface Series {
  key: string;
  label: string;
}

export interface Point {
  start: string;
  counts: Record<string, number>;
}

const WIDTH = 760;
const HEIGHT = 260;
const MARGIN = { top: 12, right: 16, bottom: 34, left: 48 };

/** The smallest of 1, 2, 5 × 10^n at or above `value`. */
export function roundUp(value: number): number {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((step) => step * power).find((candidate) => candidate >= value)!;
}

export function lineChart(title: string, points: Point[], series: Series[], label: (start: string) => string): SVGSVGElement {
  const max = roundUp(Math.max(0, ...points.flatMap((point) => series.map((line) => point.counts[line.key] ?? 0))));
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (i: number) => MARGIN.left + (points.length <= 1 ? plotWidth / 2 : (i * plotWidth) / (points.length - 1));
  const y = (value: number) => MARGIN.top + plotHeight - (value / max) * plotHeight;
  // Counts are whole numbers: so are the ticks.
  const ticks = [0, max / 2, max].filter((tick) => Number.isInteger(tick));
  const labelled = [...new Set([0, Math.floor((points.length - 1) / 2), points.length - 1])].filter((i) => i >= 0);
  const totals = series.map((line) => `${line.label} ${points.reduce((sum, point) => sum + (point.counts[line.key] ?? 0), 0)}`);
  return svg(
    'svg',
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'chart', role: 'img', 'aria-label': `${title}: ${totals.join(', ')}` },
    ticks.map((tick) => [
      svg('line', { class: 'grid', x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(tick), y2: y(tick) }),
      svg('text', { class: 'axis', x: MARGIN.left - 6, y: y(tick) + 4, 'text-anchor': 'end' }, String(tick)),
    ]),
    labelled.map((i) =>
      svg('text', { class: 'axis', x: x(i), y: HEIGHT - 10, 'text-anchor': i === 0 ? 'start' : i === points.length - 1 ? 'end' : 'middle' }, label(points[i]!.start)),
    ),
    series.map((line) =>
      svg('polyline', {
        class: `line series-${line.key.toLowerCase()}`,
        fill: 'none',
        points: points.map((point, i) => `${x(i).toFixed(1)},${y(point.counts[line.key] ?? 0).toFixed(1)}`).join(' '),
      }),
    ),
  );
}

export function legend(series: Series[]): HTMLElement {
  return h(
    'ul',
    { class: 'legend', 'aria-hidden': 'true' },
    series.map((line) => h('li', null, h('span', { class: `swatch series-${line.key.toLowerCase()}` }), line.label)),
  );
}
