/** A mistake in the command line: reported without a stack, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
