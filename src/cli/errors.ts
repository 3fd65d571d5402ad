import { readFile } from "node:fs/promises";

/** A mistake in the command line: reported without a stack, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A JSON file named by an option (`--payload order.json`); a usage error if unreadable. */
export async function readJsonFile(file: string, flag: string): Promise<unknown> {
  let content: string;
  try {
    content = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${flag} ${file}${code ? ` (${code})` : ""}`);
  }
  try {
    return JSON.parse(content.replace(/^\uFEFF/, ""));
  } catch {
    throw new UsageError(`${flag} ${file} is not valid JSON`);
  }
}
