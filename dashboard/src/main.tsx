import { render } from 'preact';
import { App } from './app';
import { beginSignIn, completeSignIn, storedToken } from './auth';
import { installLeaveGuard } from './components/leave-guard';
import { applyTheme } from './components/theme';
import './styles.css';

/**
 * The server's PUBLIC_URL, from the page it served. A browser that came by another name (127.0.0.1
 * for localhost, say) moves there: sign-in returns only to PUBLIC_URL/app/, and the token is kept per
 * origin. True when the page is leaving.
 */
function moveToPublicUrl(): boolean {
  const content = document.querySelector<HTMLMetaElement>('meta[name="vigil-public-url"]')?.content;
  if (!content) return false;
  let origin: string;
  try {
    origin = new URL(content).origin;
  } catch {
    return false;
  }
  if (origin === location.origin) return false;
  location.replace(`${origin}${location.pathname}${location.search}${location.hash}`);
  return true;
}

async function start(): Promise<void> {
  if (moveToPublicUrl()) return;
  applyTheme();
  const root = document.getElementById('root')!;
  try {
    await completeSignIn();
  } catch (error) {
    root.innerHTML = '';
    const main = document.createElement('main');
    main.className = 'page';
    main.innerHTML = '<h1>Sign-in failed</h1><p></p><p><a href="/app/">Try again</a></p>';
    main.querySelector('p')!.textContent = (error as Error).message;
    root.append(main);
    return;
  }
  if (!storedToken()) {
    await beginSignIn();
    return;
  }
  installLeaveGuard();
  render(<App />, root);
}

void start();
