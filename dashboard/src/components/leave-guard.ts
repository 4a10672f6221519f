/**
 * Unsaved changes of the view on screen: while a view holds some, leaving it inside the dashboard
 * (a link, the browser's Back or Forward, an action that navigates) asks first, and so does the browser
 * on unload.
 */
let guard: { message: string; here: string } | null = null;

/** Whether to go on: true when nothing is unsaved, or the person agrees to lose it. */
export function confirmLeaving(): boolean {
  return guard === null || window.confirm(guard.message);
}

/**
 * Back and Forward: listens before the router does (installed before the app renders), so that
 * staying keeps the router, and the view with the changes, where they are.
 */
export function installLeaveGuard(): void {
  window.addEventListener('popstate', (event) => {
    if (guard === null || window.confirm(guard.message)) return;
    event.stopImmediatePropagation();
    history.pushState(null, '', guard.here);
  });
}

/** Guards leaving while the returned function has not been called. */
export function guardLeaving(message: string): () => void {
  const current = { message, here: location.pathname + location.search + location.hash };
  guard = current;
  const onUnload = (event: BeforeUnloadEvent) => {
    event.preventDefault();
    event.returnValue = message;
  };
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
      return;
    const link = (event.target as Element | null)?.closest?.('a[href]') as HTMLAnchorElement | null;
    if (!link || link.target === '_blank' || link.origin !== window.location.origin) return;
    if (link.pathname === window.location.pathname) return;
    if (!window.confirm(message)) {
      event.preventDefault();
      event.stopPropagation();
    }
  };
  window.addEventListener('beforeunload', onUnload);
  document.addEventListener('click', onClick, true);
  return () => {
    if (guard === current) guard = null;
    window.removeEventListener('beforeunload', onUnload);
    document.removeEventListener('click', onClick, true);
  };
}
