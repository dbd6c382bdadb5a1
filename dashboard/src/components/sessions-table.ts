import { html } from 'htm/preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ago } from '../format.js';
import type { SessionRow } from '../store.js';

/** Each row's height in pixels: fixed, so only the visible rows need to exist in the DOM. */
export const rowHeight = 40;
const overscan = 8;

type SortKey = 'key' | 'state' | 'queued' | 'runId' | 'lastActivity';
interface Sort {
  readonly key: SortKey;
  readonly descending: boolean;
}

const columns: readonly { key: SortKey; label: string; className?: string }[] = [
  { key: 'key', label: 'Session' },
  { key: 'state', label: 'State' },
  { key: 'queued', label: 'Queued' },
  { key: 'runId', label: 'Active run', className: 'wide-only' },
  { key: 'lastActivity', label: 'Last activity' },
];

function compare(a: SessionRow, b: SessionRow, key: SortKey): number {
  const left = a[key] ?? '';
  const right = b[key] ?? '';
  if (left < right) return -1;
  return left > right ? 1 : 0;
}

/** Filter by key prefix, then sort (ties broken by key so the order is stable). */
export function visibleRows(rows: Iterable<SessionRow>, prefix: string, sort: Sort): SessionRow[] {
  const kept: SessionRow[] = [];
  for (const row of rows) if (row.key.startsWith(prefix)) kept.push(row);
  const sign = sort.descending ? -1 : 1;
  return kept.sort((a, b) => sign * compare(a, b, sort.key) || compare(a, b, 'key'));
}

/** The sessions table: sortable, filtered by key prefix, rendering only the rows in view. */
export function SessionsTable(props: {
  rows: ReadonlyMap<string, SessionRow>;
  version: number;
  now: number;
  loadMs: number | undefined;
  selected: string | undefined;
  onSelect: (key: string) => void;
}) {
  const [prefix, setPrefix] = useState('');
  const [sort, setSort] = useState<Sort>({ key: 'lastActivity', descending: true });
  const [scrollTop, setScrollTop] = useState(0);
  const [viewHeight, setViewHeight] = useState(480);
  const [focusIndex, setFocusIndex] = useState<number | undefined>(undefined);
  const scroller = useRef<HTMLDivElement>(null);
  const sorted = useMemo(() => visibleRows(props.rows.values(), prefix, sort), [props.version, prefix, sort]);

  useEffect(() => {
    const element = scroller.current;
    if (element === null) return undefined;
    const observer = new ResizeObserver(() => setViewHeight(element.clientHeight));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  useLayoutEffect(() => {
    if (focusIndex === undefined) return;
    scroller.current?.querySelector<HTMLButtonElement>(`[data-index="${focusIndex}"]`)?.focus();
  }, [focusIndex, scrollTop]);

  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(sorted.length, Math.ceil((scrollTop + viewHeight) / rowHeight) + overscan);
  const moveFocus = (event: KeyboardEvent, index: number): void => {
    const target = event.key === 'ArrowDown' ? index + 1 : event.key === 'ArrowUp' ? index - 1 : undefined;
    if (target === undefined || target < 0 || target >= sorted.length) return;
    event.preventDefault();
    const element = scroller.current;
    if (element !== null) {
      const top = target * rowHeight;
      const headerRoom = rowHeight;
      if (top < element.scrollTop) element.scrollTop = top;
      else if (top + rowHeight + headerRoom > element.scrollTop + element.clientHeight)
        element.scrollTop = top + rowHeight + headerRoom - element.clientHeight;
      setScrollTop(element.scrollTop);
    }
    setFocusIndex(target);
  };
  const sortBy = (key: SortKey): void =>
    setSort((current) => ({ key, descending: current.key === key ? !current.descending : key !== 'key' }));

  return html`
    <section class="panel sessions" aria-labelledby="sessions-title">
      <div class="panel-head">
        <h2 id="sessions-title">Sessions</h2>
        <label class="filter">
          <span>Filter by key prefix</span>
          <input
            type="search"
            value=${prefix}
            placeholder="telegram:"
            onInput=${(event: Event) => setPrefix((event.target as HTMLInputElement).value)}
          />
        </label>
      </div>
      <p class="caption" data-testid="sessions-count">
        ${sorted.length.toLocaleString('en')} of ${props.rows.size.toLocaleString('en')} sessions
        ${props.loadMs === undefined ? ' · loading…' : ` · loaded in ${Math.round(props.loadMs)} ms`}
      </p>
      <div
        class="scroller"
        ref=${scroller}
        onScroll=${(event: Event) => setScrollTop((event.currentTarget as HTMLElement).scrollTop)}
      >
        <table aria-rowcount=${sorted.length + 1} aria-labelledby="sessions-title">
          <thead>
            <tr aria-rowindex="1">
              ${columns.map(
                (column) => html`
                  <th
                    scope="col"
                    class=${column.className}
                    aria-sort=${sort.key === column.key ? (sort.descending ? 'descending' : 'ascending') : 'none'}
                  >
                    <button type="button" onClick=${() => sortBy(column.key)}>${column.label}</button>
                  </th>
                `,
              )}
            </tr>
          </thead>
          <tbody>
            <tr class="spacer" aria-hidden="true" style=${{ height: `${first * rowHeight}px` }}></tr>
            ${sorted.slice(first, last).map(
              (row, offset) => html`
                <tr
                  key=${row.key}
                  aria-rowindex=${first + offset + 2}
                  class=${row.key === props.selected ? 'selected' : undefined}
                  data-key=${row.key}
                >
                  <th scope="row">
                    <button
                      type="button"
                      data-index=${first + offset}
                      aria-pressed=${row.key === props.selected}
                      onClick=${() => props.onSelect(row.key)}
                      onKeyDown=${(event: KeyboardEvent) => moveFocus(event, first + offset)}
                    >
                      ${row.key}
                    </button>
                  </th>
                  <td><span class=${`state state-${row.state}`}>${row.state}</span></td>
                  <td>${row.queued}</td>
                  <td class="wide-only mono">${row.runId ?? '—'}</td>
                  <td>${ago(row.lastActivity, props.now)}</td>
                </tr>
              `,
            )}
            <tr
              class="spacer"
              aria-hidden="true"
              style=${{ height: `${(sorted.length - last) * rowHeight}px` }}
            ></tr>
          </tbody>
        </table>
      </div>
    </section>
  `;
}
