import { type FetchHandler, toFetch } from "crossborder-callbacks/fetch";
import { createMerchantRouter, readConfig } from "../../../merchant";

// Serves /crossborder/GetCheckoutCartInfo, /crossborder/SendOrderToMerchant, … (the router's
// basePath matches this folder). Unknown names get the router's 404. Built on the first request,
// so `next build` needs none of the configuration.
let callbacks: FetchHandler | undefined;

export function GET(request: Request): Promise<Response> {
  callbacks ??= toFetch(createMerchantRouter(readConfig(process.env)));
  return callbacks(request);
}
export const POST = GET;
// Answers depend on each request: never cached or prerendered.
export const dynamic = "force-dynamic";
