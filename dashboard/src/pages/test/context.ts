import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Test } from '../../api/resources';

export interface TestContextValue {
  bucket: string;
  test: Test;
  /** Puts the test as a write answered it (steps, environments and schedule writes answer the full test). */
  setTest: (test: Test) => void;
  reload: () => Promise<void>;
  /** Set while the test is not stored yet ("New test"): the first save creates it and calls this. */
  create?: (saved: Test) => void;
}

export const TestContext = createContext<TestContextValue | null>(null);

/** The test of the view, loaded once by the test's frame for all its tabs. */
export function useTest(): TestContextValue {
  const value = useContext(TestContext);
  if (!value) throw new Error('useTest outside a test view');
  return value;
}

export const testPath = (bucket: string, test: string) => `/buckets/${bucket}/tests/${test}`;
