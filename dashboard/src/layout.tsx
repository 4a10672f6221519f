import type { ComponentChildren } from 'preact';
import { Link, useLocation } from 'wouter-preact';
import { signOut } from './auth';
import { setThemeChoice, type ThemeChoice, useTheme } from './components/theme';
import { paths, useSession } from './session';

/** The bucket a path is about (`/b/<key>/…`), else the account's default bucket. */
export function bucketOfPath(path: string, fallback: string): string {
  return /^\/b\/([^/]+)/.exec(path)?.[1] ?? fallback;
}

/**
 * The frame of every view: a skip link, the header with the bucket switcher and the main
 * navigation, the account menu and the theme choice; the view itself in `<main>`.
 */
export function Layout(props: { children: ComponentChildren }) {
  const { account, buckets } = useSession();
  const [location, navigate] = useLocation();
  const fallback = buckets.find((bucket) => bucket.default)?.key ?? buckets[0]?.key ?? '';
  const bucket = bucketOfPath(location, fallback);
  const { choice } = useTheme();
  const section = (prefix: string) => (location.startsWith(prefix) ? 'page' : undefined);

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="app-header">
        <Link href={paths.tests(bucket)} class="brand" aria-label="Vigil home">
          Vigil
        </Link>
        <label class="bucket-switcher">
          <span class="visually-hidden">Bucket</span>
          <select
            value={bucket}
            onChange={(event) => navigate(paths.tests(event.currentTarget.value))}
            aria-label="Bucket"
          >
            {buckets.map((b) => (
              <option key={b.key} value={b.key}>
                {b.name}
              </option>
            ))}
          </select>
        </label>
        <nav class="main-nav" aria-label="Main">
          <Link href={paths.tests(bucket)} aria-current={section(`/b/${bucket}/tests`)}>
            Tests
          </Link>
          <Link href={paths.sharedEnvironments(bucket)} aria-current={section(`/b/${bucket}/environments`)}>
            Environments
          </Link>
          <Link href={paths.traffic(bucket)} aria-current={section(`/b/${bucket}/traffic`)}>
            Traffic
          </Link>
          <Link href={paths.bucketSettings(bucket)} aria-current={section(`/b/${bucket}/settings`)}>
            Bucket
          </Link>
          <Link href={paths.account()} aria-current={section('/account')}>
            Account
          </Link>
        </nav>
        <div class="header-tools">
          <label>
            <span class="visually-hidden">Theme</span>
            <select
              aria-label="Theme"
              value={choice}
              onChange={(event) => setThemeChoice(event.currentTarget.value as ThemeChoice)}
            >
              <option value="system">System theme</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </label>
          <span class="account-name" title={account.email}>
            {account.name}
          </span>
          <button type="button" class="secondary small" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" class="page" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}
