/**
 * Run by workerd through Miniflare (as an esbuild bundle, no nodejs_compat): the service client
 * inside a Worker. It also imports the testing entry, which must load where `node:http` does not
 * exist (the simulator loads it only when started).
 */
import { createServiceSimulator, SIMULATOR_MERCHANT_GUID } from "../../../src/testing/index.js";
import { handleRun } from "./scenario.js";

export default {
  async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname === "/testing-entry") {
      return Response.json({
        guid: SIMULATOR_MERCHANT_GUID,
        simulator: typeof createServiceSimulator,
      });
    }
    return handleRun(request);
  },
};
