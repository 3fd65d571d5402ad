// The README's ```ts snippets and what they take as given, shared by test/docs/snippets.test.ts
// (TypeScript 5.9, through its API) and test/types/ts7.test.ts (TypeScript 7, through its CLI).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../adapters/support/runtime.js";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");

/** Each ```ts block: a file name for it, the README line it starts on, its code. */
export const snippets = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match, index) => ({
  name: `readme-${String(index + 1).padStart(2, "0")}.ts`,
  line: readme.slice(0, match.index).split("\n").length + 1,
  code: match[1] ?? "",
}));

/** What the README's snippets take as given; a global script, seen by every snippet. */
export const GIVEN = `
declare const router: import("crossborder-callbacks").CallbackRouter;
declare const auth: import("crossborder-callbacks").Authenticator;
declare const Bun: {
  serve(options: { port: number; fetch: (request: Request, server: never) => unknown }): unknown;
};
declare namespace Deno {
  interface NetAddr { hostname: string; port: number }
  interface ServeHandlerInfo<A> { remoteAddr: A }
  function serve(
    options: { port: number },
    handler: (request: Request, info: ServeHandlerInfo<NetAddr>) => Response | Promise<Response>,
  ): unknown;
}
`;

/** The merchant's own functions the testing example imports (`../src/callbacks.js`). */
export const CALLBACKS = `import type { CallbackHandlers } from "crossborder-callbacks";
export const handlers = {} satisfies CallbackHandlers;
`;
