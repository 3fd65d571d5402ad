import { mkdir, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createTestKeys } from "../testing/keys.js";
import { UsageError } from "./errors.js";

export const PUBLIC_KEY_FILE = "service-test-public.pem";
export const PRIVATE_KEY_FILE = "service-test-private.pem";

export interface WrittenKeys {
  readonly publicKeyPath: string;
  readonly privateKeyPath: string;
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}

/**
 * Generates a test key pair and writes `service-test-public.pem` (mode 0644) and
 * `service-test-private.pem` (mode 0600) into `dir`, creating it if needed. Existing files are
 * kept unless `force`: then they are removed first, so the private key is never written into a
 * file with wider permissions.
 */
export async function writeTestKeys(
  dir: string,
  options: { force?: boolean } = {},
): Promise<WrittenKeys> {
  const directory = resolve(dir);
  try {
    await mkdir(directory, { recursive: true });
  } catch (error) {
    // An existing file on the way, no permission: the user's path, not a bug.
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw new UsageError(`cannot create the directory ${dir} (${code})`);
  }
  const publicKeyPath = join(directory, PUBLIC_KEY_FILE);
  const privateKeyPath = join(directory, PRIVATE_KEY_FILE);
  const keys = await createTestKeys();
  if (options.force) {
    await rm(publicKeyPath, { force: true });
    await rm(privateKeyPath, { force: true });
  }
  let wrotePrivate = false;
  try {
    // `wx`: fails instead of replacing a file, and the mode applies because the file is new.
    await writeFile(privateKeyPath, keys.privateKey, { mode: 0o600, flag: "wx" });
    wrotePrivate = true;
    await writeFile(publicKeyPath, keys.publicKey, { mode: 0o644, flag: "wx" });
  } catch (error) {
    // Never leave half a pair behind.
    if (wrotePrivate) await rm(privateKeyPath, { force: true });
    if (isErrno(error, "EEXIST")) {
      throw new UsageError(
        `${(error as NodeJS.ErrnoException).path ?? "a key file"} already exists (pass --force to replace the pair)`,
      );
    }
    throw error;
  }
  return { publicKeyPath, privateKeyPath };
}
