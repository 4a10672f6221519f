/**
 * SIGINT and SIGTERM stop the process cleanly: the first calls `stop` (which waits up to
 * SHUTDOWN_GRACE for running tests, then hands them over), a second one calls `hurry` (hand the
 * running tests over now) instead of killing the process mid-way. The process exits when `stop` ends.
 */
export function stopOnSignals(
  stop: (signal: NodeJS.Signals) => Promise<void>,
  hurry: (signal: NodeJS.Signals) => void,
): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      hurry(signal);
      return;
    }
    stopping = true;
    void stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(
          `vigil: could not stop cleanly: ${(error as Error)?.message ?? String(error)}\n`,
        );
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
