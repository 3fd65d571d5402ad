/** Run by Bun (as an esbuild bundle): the service client inside Bun, reached through Bun.serve. */
import { handleRun } from "./scenario.js";

declare const Bun: {
  serve(options: { hostname: string; port: number; fetch(request: Request): Promise<Response> }): {
    readonly port: number;
  };
};

const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handleRun });
console.log(`listening on http://127.0.0.1:${server.port}`);
