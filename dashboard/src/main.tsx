import { render } from 'preact';
import { App } from './app';
import { beginSignIn, completeSignIn, storedToken } from './auth';
import { applyTheme } from './components/theme';
import './styles.css';

async function start(): Promise<void> {
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
  render(<App />, root);
}

void start();
