/**
 * Vitest global setup. Each example is a project of its own (its own package.json), so inside
 * this repository `crossborder-callbacks` no longer resolves from examples/ by the package's
 * self-reference. A link node_modules/crossborder-callbacks → the repository root (what a
 * workspace would make) lets the in-repository example tests import the package by its name,
 * which resolves, as for a user, through its exports to dist/.
 */
import { lstatSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export default function setup(): void {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const link = join(root, "node_modules", "crossborder-callbacks");
  try {
    lstatSync(link);
  } catch {
    symlinkSync("..", link, "dir");
  }
}
