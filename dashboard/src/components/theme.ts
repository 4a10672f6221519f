import { useEffect, useState } from 'preact/hooks';

export type ThemeChoice = 'system' | 'light' | 'dark';
const KEY = 'vigil.theme';
const listeners = new Set<() => void>();
const media = matchMedia('(prefers-color-scheme: dark)');

export function themeChoice(): ThemeChoice {
  const stored = localStorage.getItem(KEY);
  return stored === 'light' || stored === 'dark' ? stored : 'system';
}

function isDark(choice: ThemeChoice): boolean {
  return choice === 'dark' || (choice === 'system' && media.matches);
}

/** Applies the theme to the document: `data-theme` drives the CSS variables. */
export function applyTheme(): void {
  document.documentElement.dataset.theme = isDark(themeChoice()) ? 'dark' : 'light';
  for (const listener of listeners) listener();
}

export function setThemeChoice(choice: ThemeChoice): void {
  if (choice === 'system') localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, choice);
  applyTheme();
}

media.addEventListener('change', applyTheme);

/** The theme in effect; views re-render when it changes. */
export function useTheme(): { choice: ThemeChoice; dark: boolean } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((tick) => tick + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  const choice = themeChoice();
  return { choice, dark: isDark(choice) };
}
