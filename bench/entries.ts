/**
 * The entry files of the cold-start and bundle benchmarks, written into bench/.tmp/pkg next to
 * the build: its package.json carries the package's name and exports map, so these files import
 * `crossborder-callbacks` and `crossborder-callbacks/fetch` by name, exactly as a user does (Node
 * and esbuild resolve the self-reference through the exports map), and jose and zod from the
 * project's node_modules.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PKG_DIR } from "./shared.js";

/** The package's handler factories: every callback it serves. */
export const FACTORIES = [
  "createGetCheckoutCartInfoHandler",
  "createSendOrderToMerchantHandler",
  "createUpdateOrderStatusHandler",
  "createPerformOrderPaymentHandler",
  "createSendRMAInfoToMerchantHandler",
  "createUpdateParcelDispatchHandler",
  "createRemoveRestrictedProductsHandler",
  "createSendAdditionalRequiredDocumentsToMerchantHandler",
] as const;

const build = (factory: string) =>
  factory === "createGetCheckoutCartInfoHandler"
    ? `toFetch(${factory}(() => ({ productsList: [] }), { auth }))`
    : `toFetch(${factory}(() => undefined, { auth }))`;

/** Cold start, library: import the package and the fetch adapter, createAuth (PEM), every handler. */
export const COLD_LIBRARY = `import { createAuth, ${FACTORIES.join(", ")} } from "crossborder-callbacks";
import { toFetch } from "crossborder-callbacks/fetch";
const auth = await createAuth({ jwt: { environment: "test", keys: { test: process.env.BENCH_PUBLIC_PEM } } });
const handlers = [
  ${FACTORIES.map(build).join(",\n  ")},
];
if (handlers.some((h) => typeof h !== "function")) throw new Error("not built");
process.stdout.write(JSON.stringify({ ready: performance.now(), handlers: handlers.length }) + "\\n");
`;

/** Cold start, baseline: jose and zod imported, the same PEM key imported with importSPKI. */
export const COLD_BASELINE = `import { importSPKI, jwtVerify } from "jose";
import { z } from "zod";
const key = await importSPKI(process.env.BENCH_PUBLIC_PEM, "RS256");
if (typeof jwtVerify !== "function" || typeof z.object !== "function" || key.type !== "public") throw new Error("not ready");
process.stdout.write(JSON.stringify({ ready: performance.now(), handlers: 0 }) + "\\n");
`;

/** Bundle, library: a Cloudflare Worker serving every callback through the fetch adapter. */
export const WORKER_LIBRARY = `import { createAuth, createCallbackRouter, ${FACTORIES.join(", ")} } from "crossborder-callbacks";
import { toFetch } from "crossborder-callbacks/fetch";
let callbacks;
export default {
  fetch(request, env) {
    if (!callbacks) {
      const auth = createAuth({ jwt: { environment: "production", keys: { production: env.SERVICE_PUBLIC_KEY } } });
      const ok = () => undefined;
      callbacks = toFetch(createCallbackRouter({
        basePath: "/crossborder",
        auth,
        handlers: {
          GetCheckoutCartInfo: createGetCheckoutCartInfoHandler((query) => env.carts.get(query.merchantCartToken), { auth }),
          SendOrderToMerchant: createSendOrderToMerchantHandler((order) => ({ OrderId: order.OrderId }), { auth }),
          UpdateOrderStatus: createUpdateOrderStatusHandler(ok, { auth }),
          PerformOrderPayment: createPerformOrderPaymentHandler(ok, { auth }),
          SendRMAInfoToMerchant: createSendRMAInfoToMerchantHandler(ok, { auth }),
          UpdateParcelDispatch: createUpdateParcelDispatchHandler(ok, { auth }),
          RemoveRestrictedProducts: createRemoveRestrictedProductsHandler(ok, { auth }),
          SendAdditionalRequiredDocumentsToMerchant: createSendAdditionalRequiredDocumentsToMerchantHandler(ok, { auth }),
        },
      }));
    }
    return callbacks(request);
  },
};
`;

/**
 * Bundle, baseline: what a hand-written Worker needs at the least: jose's importSPKI and jwtVerify,
 * and zod's z.object (with z.string, z.number, z.array) to validate the body.
 */
export const WORKER_BASELINE = `import { importSPKI, jwtVerify } from "jose";
import { z } from "zod";
const order = z.object({ OrderId: z.string(), Products: z.array(z.object({ Sku: z.string(), Price: z.number() })) });
let key;
export default {
  async fetch(request, env) {
    key ??= await importSPKI(env.SERVICE_PUBLIC_KEY, "RS256");
    const token = (request.headers.get("authorization") ?? "").slice(7);
    await jwtVerify(token, key, { algorithms: ["RS256"] });
    const payload = order.parse(await request.json());
    return new Response(JSON.stringify({ Success: true, OrderId: payload.OrderId }), {
      headers: { "content-type": "application/json" },
    });
  },
};
`;

export const ENTRY_FILES = {
  coldLibrary: "cold-library.mjs",
  coldBaseline: "cold-baseline.mjs",
  workerLibrary: "worker-library.mjs",
  workerBaseline: "worker-baseline.mjs",
} as const;

export function writeEntries(): void {
  // Without it esbuild would apply the project's tsconfig "paths", which map the package's name
  // to src/: the bundle must be made of the build, as a user's is.
  writeFileSync(join(PKG_DIR, "tsconfig.json"), "{}\n");
  writeFileSync(join(PKG_DIR, ENTRY_FILES.coldLibrary), COLD_LIBRARY);
  writeFileSync(join(PKG_DIR, ENTRY_FILES.coldBaseline), COLD_BASELINE);
  writeFileSync(join(PKG_DIR, ENTRY_FILES.workerLibrary), WORKER_LIBRARY);
  writeFileSync(join(PKG_DIR, ENTRY_FILES.workerBaseline), WORKER_BASELINE);
}
