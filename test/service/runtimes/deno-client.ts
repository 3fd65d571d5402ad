/** Run by Deno (as an esbuild bundle): the service client inside Deno, reached through Deno.serve. */
import { handleRun } from "./scenario.js";

declare const Deno: {
  serve(
    options: { hostname: string; port: number; onListen(address: { port: number }): void },
    handler: (request: Request) => Promise<Response>,
  ): unknown;
};

Deno.serve(
  {
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => console.log(`listening on http://127.0.0.1:${port}`),
  },
  handleRun,
);
