/** Chai ships no types; the tests use its `assert` interface only to compare the sandbox's with it. */
declare module 'chai' {
  export const assert: (...args: unknown[]) => void;
}
