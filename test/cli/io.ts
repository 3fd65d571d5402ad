import type { CliIo } from "../../src/cli/main.js";

/** A captured stdout/stderr pair, not a TTY, no colour variables unless given. */
export function captureIo(env: Record<string, string | undefined> = {}, isTTY = false) {
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: { write: (text: string) => (out += text), isTTY },
    stderr: { write: (text: string) => (err += text), isTTY },
    env,
  };
  return {
    io,
    get stdout() {
      return out;
    },
    get stderr() {
      return err;
    },
  };
}
