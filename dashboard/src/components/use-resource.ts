import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Resource<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again; the current data stays on screen meanwhile. */
  reload: () => Promise<void>;
  /** Replaces the data after a write answered with the new state. */
  setData: (data: T) => void;
}

/**
 * Data loaded from the API for a view: loads when a dependency changes, aborts the previous load,
 * and ignores answers that arrive after the view moved on.
 */
export function useResource<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: readonly unknown[],
): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const current = useRef<AbortController | null>(null);
  const loader = useRef(load);
  loader.current = load;

  const reload = useCallback(async () => {
    current.current?.abort();
    const controller = new AbortController();
    current.current = controller;
    setLoading(true);
    try {
      const value = await loader.current(controller.signal);
      if (controller.signal.aborted) return;
      setData(value);
      setError(undefined);
    } catch (failure) {
      if (controller.signal.aborted) return;
      setError(failure);
    } finally {
      if (!controller.signal.aborted) setLoading(false);
    }
  }, []);

  useEffect(() => {
    setData(undefined);
    void reload();
    return () => current.current?.abort();
  }, deps);

  return { data, error, loading, reload, setData };
}

/** Calls `tick` every `ms` while `active`, and once when the tab becomes visible again. */
export function usePolling(tick: () => void, ms: number, active: boolean): void {
  const saved = useRef(tick);
  saved.current = tick;
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') saved.current();
    }, ms);
    const onVisible = () => document.visibilityState === 'visible' && saved.current();
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [ms, active]);
}
