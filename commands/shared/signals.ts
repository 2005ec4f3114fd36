/**
 * Resolves with the name of the first of `signals` the process receives. The handlers are
 * installed once (process.once), so a second Ctrl-C during a slow shutdown falls back to
 * Node's default and ends the process at once. Call dispose() to remove them early.
 */
export function nextSignal(signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT']): { received: Promise<NodeJS.Signals>; dispose(): void } {
  const handlers = new Map<NodeJS.Signals, () => void>();
  const dispose = () => {
    for (const [signal, handler] of handlers) process.removeListener(signal, handler);
    handlers.clear();
  };
  const received = new Promise<NodeJS.Signals>((resolve) => {
    for (const signal of signals) {
      const handler = () => {
        dispose();
        resolve(signal);
      };
      handlers.set(signal, handler);
      process.once(signal, handler);
    }
  });
  return { received, dispose };
}
