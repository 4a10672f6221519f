import type { ComponentType, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorBanner, Loading } from './ui';

/**
 * A view loaded on first visit, so the first page downloads only what it shows. The module's
 * export named `name` is the component.
 */
export function lazyView<P extends object>(
  load: () => Promise<Record<string, unknown>>,
  name: string,
): (props: P) => JSX.Element {
  let cached: ComponentType<P> | undefined;
  return function LazyView(props: P) {
    const [component, setComponent] = useState<ComponentType<P> | undefined>(() => cached);
    const [error, setError] = useState<unknown>(undefined);
    useEffect(() => {
      if (cached) return;
      load()
        .then((module) => {
          cached = module[name] as ComponentType<P>;
          setComponent(() => cached);
        })
        .catch(setError);
    }, []);
    if (error) return <ErrorBanner error={error} onRetry={() => location.reload()} />;
    if (!component) return <Loading />;
    const View = component;
    return <View {...props} />;
  };
}
