import { useEffect, useState } from 'preact/hooks';
import type { DashboardState, DashboardStore } from './store.js';

/** The store's state, re-rendering the component on every change. */
export function useDashboard(store: DashboardStore): DashboardState {
  const [state, setState] = useState(store.get());
  useEffect(() => store.subscribe(() => setState(store.get())), [store]);
  return state;
}

/** The page clock, ticking every `intervalMs` (countdowns and rates). */
export function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}
