/**
 * Features backed by an optional dependency (transformers.js, stripe, the MCP SDK, the
 * OpenTelemetry SDK) are imported only when configured. An install without optional
 * dependencies then fails on use with one line that says what to install, not a stack trace.
 */
export class OptionalModuleMissingError extends Error {
  constructor(readonly feature: string, readonly installCommand: string, options?: { cause?: unknown }) {
    super(`${feature} needs an optional package that is not installed: run \`${installCommand}\``, options);
    this.name = 'OptionalModuleMissingError';
  }
}

/** Runs `load` (a dynamic import); a missing module becomes OptionalModuleMissingError. */
export async function importOptional<T>(load: () => Promise<T>, feature: string, installCommand: string): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') throw new OptionalModuleMissingError(feature, installCommand, { cause: err });
    throw err;
  }
}
