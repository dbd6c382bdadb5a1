import { html } from 'htm/preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Rates } from '../rates.js';

const height = 180;

function options(width: number): uPlot.Options {
  return {
    width,
    height,
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, wait: { auto: true } },
    axes: [
      {},
      { label: 'per second', size: 50 },
      { label: 'lane wait (ms)', scale: 'wait', side: 1, grid: { show: false }, size: 60 },
    ],
    series: [
      {},
      { label: 'messages/s', stroke: '#1f5fbf', width: 2 },
      { label: 'events/s', stroke: '#6b4fa8', width: 1 },
      { label: 'lane wait (ms)', stroke: '#b3541e', width: 2, scale: 'wait', spanGaps: false },
    ],
  };
}

/** What the chart shows, in words (its accessible name): the totals over its five minutes. */
function describe(series: ReturnType<Rates['series']>): string {
  const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);
  return (
    'Chart of messages per second, events per second and lane wait: ' +
    `${sum(series[1])} messages and ${sum(series[2])} events in the last 5 minutes`
  );
}

/** Throughput (messages and events per second) and the longest lane wait per second, over five minutes. */
export function ThroughputChart(props: { rates: Rates }) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (element === null) return undefined;
    const first = props.rates.series(Date.now());
    const plot = new uPlot(options(Math.max(element.clientWidth, 280)), first, element);
    element.setAttribute('aria-label', describe(first));
    const timer = setInterval(() => {
      const series = props.rates.series(Date.now());
      plot.setData(series);
      element.setAttribute('aria-label', describe(series));
    }, 1000);
    const observer = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(element.clientWidth, 280), height }),
    );
    observer.observe(element);
    return () => {
      clearInterval(timer);
      observer.disconnect();
      plot.destroy();
    };
  }, [props.rates]);
  return html`
    <section class="panel chart" aria-labelledby="chart-title">
      <h2 id="chart-title">Throughput and lane wait, last 5 minutes</h2>
      <div
        ref=${holder}
        role="img"
        aria-label="Chart of messages per second, events per second and lane wait"
        data-testid="throughput-chart"
      ></div>
    </section>
  `;
}
