import { toFetch } from "crossborder-callbacks/fetch";
import { createMerchantRouter, readConfig } from "../../../../shared/merchant.js";

// Serves /crossborder/GetCheckoutCartInfo, /crossborder/SendOrderToMerchant, … (the router's
// basePath matches this folder). Unknown names get the router's 404.
const handler = toFetch(createMerchantRouter(readConfig(process.env)));

export const GET = handler;
export const POST = handler;
// Answers depend on each request: never cached or prerendered.
export const dynamic = "force-dynamic";
