/**
 * A mistake in what the user gave (an input, a flag, the script, the cluster's permissions):
 * the message is one line that names the input and what is wrong, and it is shown as it is.
 * Anything else that is thrown is a bug or an outage and is shown with its stack in debug logs.
 * (The split follows github/codeql-action's ConfigurationError.)
 */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}

/** Returns the message of any thrown value. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
