/**
 * Where one SendOrderToMerchant (30 products) spends its time: each stage of the handler run alone
 * on what the stage before it produced, using the library's internal modules from src/ directly.
 *
 *   node --import tsx bench/profile.ts   (knobs: PROFILE_ROUNDS, PROFILE_BATCH, PROFILE_PRODUCTS,
 *                                         PROFILE_WARMUP_MS)
 *
 * Each call of a stage is timed alone, its input prepared just before it, outside the timing.
 * Stages that walk or change the parsed body (the sealing walk, the schema check, decoding, card
 * protection) get a freshly parsed body per call, just parsed as in the handler: one body reused
 * for every call would be walked again and again with no new allocation behind it, and a pool of
 * bodies prepared in advance would be cold in the CPU's caches (measured: zod's check of the order
 * came out ~40 µs the first way and ~110 µs the second). The figure is the median over rounds of
 * the mean time per call, with the process's CPU time beside it. The whole handler and the floor are measured the same way, one
 * call at a time, so the stages can be compared with them (the stages do not add up to the whole:
 * the handler also allocates its context, awaits, and pays the GC of all of it).
 *
 * The internals are looked up by name at run time: a stage whose function is renamed or gone is
 * reported as skipped, with the reason, and the others still run. Update the names here after a
 * rename.
 */
import { importSPKI, jwtVerify } from "jose";
import {
  authConfig,
  FLOOR_VERIFY_OPTIONS,
  floorPost,
  makeSecrets,
  ORDER_RESPONSE,
  ORDER_RESULT,
  orderWithProducts,
  quiet,
} from "./shared.js";
import { median, percentile } from "./stats.js";

const ROUNDS = Number(process.env.PROFILE_ROUNDS ?? 15);
/** Calls per timed batch (and prepared inputs per batch). */
const BATCH = Number(process.env.PROFILE_BATCH ?? 200);
const PRODUCTS = Number(process.env.PROFILE_PRODUCTS ?? 30);
/** Each stage runs this long before its timed rounds (past the JIT's tiering). */
const WARMUP_MS = Number(process.env.PROFILE_WARMUP_MS ?? 1000);
const MAX_DEPTH = 64;

type Module = Record<string, unknown>;

/** Imports a module of src/, or undefined (with the reason kept) if it is gone. */
const missing: string[] = [];
async function load(path: string): Promise<Module> {
  try {
    return (await import(new URL(`../src/${path}`, import.meta.url).href)) as Module;
  } catch (error) {
    missing.push(`src/${path}: ${(error as Error).message.split("\n")[0]}`);
    return {};
  }
}

/** The first of `names` that `module` exports as a function. */
function fn<T extends (...args: never[]) => unknown>(
  module: Module,
  ...names: string[]
): T | undefined {
  for (const name of names) if (typeof module[name] === "function") return module[name] as T;
  return undefined;
}

interface Stage<I> {
  readonly name: string;
  /** Untimed: one input for one call. */
  readonly prepare: () => I | Promise<I>;
  readonly run: (input: I) => unknown;
  /** Does `prepare` need to run before every call (the stage changes its input)? */
  readonly fresh: boolean;
  /** One of the handler's stages after authentication (summed against the whole handler)? */
  readonly part?: boolean;
}

interface Timing {
  readonly name: string;
  readonly wallUs: number;
  readonly p10: number;
  readonly p90: number;
  readonly cpuUs: number;
}

async function time<I>(stage: Stage<I>): Promise<Timing> {
  const shared = stage.fresh ? undefined : await stage.prepare();
  const wall: number[] = [];
  const cpu: number[] = [];
  const until = performance.now() + WARMUP_MS;
  while (performance.now() < until) {
    const input = stage.fresh ? await stage.prepare() : (shared as I);
    await stage.run(input);
  }
  // Round 0 is discarded too. Each call is timed alone, right after its input is prepared (so a
  // fresh body is as cache-warm as the one the handler has just parsed).
  for (let round = 0; round <= ROUNDS; round++) {
    let wallSum = 0;
    let cpuSum = 0;
    for (let i = 0; i < BATCH; i++) {
      const input = stage.fresh ? await stage.prepare() : (shared as I);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await stage.run(input);
      const t1 = performance.now();
      const c1 = process.cpuUsage(c0);
      wallSum += (t1 - t0) * 1e3;
      cpuSum += c1.user + c1.system;
    }
    if (round === 0) continue;
    wall.push(wallSum / BATCH);
    cpu.push(cpuSum / BATCH);
  }
  return {
    name: stage.name,
    wallUs: median(wall),
    p10: percentile(wall, 10),
    p90: percentile(wall, 90),
    cpuUs: median(cpu),
  };
}

async function main(): Promise<void> {
  const [index, body, seal, card, headersModule, sendOrderModule, policy, generated, engine] =
    await Promise.all([
      load("index.ts"),
      load("core/body.ts"),
      load("core/seal.ts"),
      load("core/card.ts"),
      load("core/headers.ts"),
      load("callbacks/send-order-to-merchant.ts"),
      load("decode/policy.ts"),
      load("generated/checkers.ts"),
      load("core/engine.ts"),
    ]);

  const { publicPem, token } = await makeSecrets();
  const key = await importSPKI(publicPem, "RS256");
  const decoder = new TextDecoder();
  const bytes = Buffer.from(JSON.stringify(orderWithProducts(PRODUCTS)));
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const request = { method: "POST", url: "/crossborder/SendOrderToMerchant", headers, body: bytes };

  type Definition = {
    schema?: { safeParse(v: unknown): { success: boolean; data?: unknown } };
    encodedFields?: unknown;
    response?: { success(result: unknown): unknown };
  };
  const definition = (sendOrderModule.sendOrderToMerchant ?? {}) as Definition;
  const zodSchema = (index.sendOrderToMerchantSchema ?? definition.schema) as
    | Definition["schema"]
    | undefined;

  const createAuth = fn<(c: unknown) => Promise<Record<string, unknown>>>(index, "createAuth");
  const auth = createAuth ? await createAuth(authConfig(publicPem)) : undefined;
  const parseJson = fn<(b: Uint8Array, d: number) => { ok: boolean; value?: unknown }>(
    body,
    "parseJson",
  );
  const sealBody = fn<(v: unknown, d: number) => { ok: boolean }>(seal, "sealBody");
  type Plan = { apply?(v: unknown): unknown; decodeInPlace?(v: unknown): unknown };
  const compileDecoding = fn<(f: unknown, o?: unknown) => Plan>(policy, "compileDecoding");
  const protect = fn<(v: unknown) => void>(card, "protectPaymentDetails");
  const headerReader = fn<(h: unknown) => unknown>(headersModule, "headerReader");
  const createHandler = fn<(f: () => unknown, o: unknown) => { handle(r: unknown): unknown }>(
    index,
    "createSendOrderToMerchantHandler",
  );

  const parse = () => JSON.parse(decoder.decode(bytes)) as Record<string, unknown>;
  const sealed = () => {
    const value = parse();
    sealBody?.(value, MAX_DEPTH);
    return value;
  };
  // The checker generated from the schema (src/generated/checkers.ts), as the engine uses it.
  const checkers = generated.PAYLOAD_CHECKERS as
    | Record<string, { schema: unknown; check(v: unknown): unknown }>
    | undefined;
  const checker = checkers?.SendOrderToMerchant;
  const check = checker?.schema === definition.schema ? checker?.check : undefined;
  // The engine's usual way since issue 13: the check and what the sealing walk would find, in one
  // pass; the walk and the plain check run only when it cannot vouch for the body.
  const checkSealed = fn<(c: unknown, v: unknown, d: number) => unknown>(generated, "checkSealed");
  const sealedCheck = check !== undefined ? checkSealed : undefined;
  const cardSecretsOf = fn<(d: unknown, out: string[]) => void>(card, "cardSecretsOf");
  // Since issue 13's third round the engine copies the fields and scans only if a text is redacted.
  const cardSecretsLater = fn<(d: unknown) => unknown>(card, "cardSecretsLater");
  const validated = () => {
    const value = sealed();
    if (check !== undefined && check(value) === generated.ACCEPT) return value;
    const result = definition.schema?.safeParse(value);
    return result?.success ? result.data : value;
  };
  const plan = compileDecoding?.(definition.encodedFields);
  // The engine decodes in place; older code decoded into a copy.
  const decode = plan?.decodeInPlace
    ? (v: unknown) => plan.decodeInPlace?.(v)
    : plan?.apply
      ? (v: unknown) => plan.apply?.(v)
      : undefined;

  // The decoder generated at build time (src/generated/decoders.ts), as the engine picks it for a
  // default handler (issue 13); the engine runs it on a body the sealed check accepted.
  const decoderFor = fn<(d: unknown, o: unknown) => ((v: unknown) => unknown) | undefined>(
    engine,
    "generatedDecoderFor",
  );
  const generatedDecode = decoderFor?.(definition, undefined);

  const stages: (Stage<unknown> | string)[] = [];
  const add = <I>(ok: unknown, why: string, stage: Stage<I>) =>
    stages.push(ok ? (stage as Stage<unknown>) : `${stage.name}: skipped (${why})`);

  add(true, "", {
    name: "JWT verify (jose jwtVerify, key imported once; the floor's)",
    prepare: () => token,
    run: (t) => jwtVerify(t as string, key, FLOOR_VERIFY_OPTIONS),
    fresh: false,
  });
  add(auth && headerReader, "createAuth or headerReader not found", {
    name: "JWT verify through createAuth (authenticateRequest)",
    prepare: () => ({
      callback: "SendOrderToMerchant",
      method: "POST",
      url: new URL("http://localhost/crossborder/SendOrderToMerchant"),
      headers: headerReader?.(headers),
      remoteAddress: undefined,
    }),
    run: (r) =>
      (auth as { authenticateRequest(r: unknown): Promise<unknown> }).authenticateRequest(r),
    fresh: false,
  });
  add(true, "", {
    name: "TextDecoder + JSON.parse (the floor's)",
    prepare: () => bytes,
    run: (b) => JSON.parse(decoder.decode(b as Uint8Array)),
    fresh: false,
  });
  add(parseJson, "core/body.ts parseJson not found", {
    name: "parseJson (library: UTF-8 check, JSON.parse)",
    prepare: () => bytes,
    run: (b) => parseJson?.(b as Uint8Array, MAX_DEPTH),
    fresh: false,
    part: true,
  });
  add(sealBody, "core/seal.ts sealBody not found", {
    name: "sealing walk (sealBody: depth, __proto__, card fields)",
    prepare: parse,
    run: (v) => sealBody?.(v, MAX_DEPTH),
    fresh: true,
    part: sealedCheck === undefined,
  });
  add(zodSchema, "sendOrderToMerchantSchema not found", {
    name: "schema check (zod safeParse: only where the checker does not accept)",
    prepare: sealed,
    run: (v) => zodSchema?.safeParse(v),
    fresh: true,
    part: check === undefined && definition.schema === zodSchema,
  });
  add(check, "no generated checker for this definition's schema", {
    name: "schema check (the generated checker alone, after the walk)",
    prepare: sealed,
    run: (v) => check?.(v),
    fresh: true,
    part: sealedCheck === undefined,
  });
  add(sealedCheck, "no checkSealed in src/generated/checkers.ts", {
    name: "sealed check (checkSealed: check + what the walk finds; the engine's way)",
    prepare: parse,
    run: (v) => sealedCheck?.(checker, v, MAX_DEPTH),
    fresh: true,
    part: true,
  });
  add(decode, "decode/policy.ts compileDecoding not found", {
    name: plan?.decodeInPlace ? "decoding (decodeInPlace)" : "decoding (apply, copy-on-write)",
    prepare: validated,
    run: (v) => decode?.(v),
    fresh: true,
    part: generatedDecode === undefined,
  });
  add(
    generatedDecode,
    "no generatedDecoderFor in src/core/engine.ts, or no decoder for the order",
    {
      name: "decoding (generated decoder; the engine's way)",
      prepare: validated,
      run: (v) => generatedDecode?.(v),
      fresh: true,
      part: true,
    },
  );
  add(cardSecretsLater ?? cardSecretsOf, "core/card.ts cardSecretsOf not found", {
    name: cardSecretsLater
      ? "card secrets for the redactor (cardSecretsLater: the fields copied)"
      : "card secrets for the redactor (cardSecretsOf on PaymentDetails)",
    prepare: () => (validated() as Record<string, unknown>).PaymentDetails,
    run: (d) => (cardSecretsLater ? cardSecretsLater(d) : cardSecretsOf?.(d, [])),
    fresh: true,
    part: true,
  });
  add(protect, "core/card.ts protectPaymentDetails not found", {
    name: "card protection (protectPaymentDetails on PaymentDetails)",
    prepare: () => (validated() as Record<string, unknown>).PaymentDetails,
    run: (d) => protect?.(d),
    fresh: true,
    part: true,
  });
  add(definition.response, "the definition has no response shape", {
    name: "merchant answer serialisation (response.success)",
    prepare: () => ORDER_RESULT,
    run: (r) => definition.response?.success(r),
    fresh: false,
    part: true,
  });
  add(true, "", {
    name: "JSON.stringify of the answer (the floor's)",
    prepare: () => ORDER_RESPONSE,
    run: (r) => JSON.stringify(r),
    fresh: false,
  });
  const handler = createHandler?.(() => ORDER_RESULT, { auth, ...quiet });
  const noAuth = createHandler?.(() => ORDER_RESULT, { auth: false, ...quiet });
  add(handler && auth, "createSendOrderToMerchantHandler not found", {
    name: "WHOLE handler.handle (with createAuth)",
    prepare: () => request,
    run: (r) => handler?.handle(r),
    fresh: false,
  });
  add(noAuth, "createSendOrderToMerchantHandler not found", {
    name: "WHOLE handler.handle (auth: false)",
    prepare: () => request,
    run: (r) => noAuth?.handle(r),
    fresh: false,
  });
  // The same handler decoding with the plan (a decoding option that changes nothing): the A/B of
  // the generated decoder inside the whole handler.
  const planned = createHandler?.(() => ORDER_RESULT, {
    auth: false,
    decoding: { default: "auto" },
    ...quiet,
  });
  add(
    planned && generatedDecode,
    "createSendOrderToMerchantHandler or the generated decoder not found",
    {
      name: "WHOLE handler.handle (auth: false; the plan decodes)",
      prepare: () => request,
      run: (r) => planned?.handle(r),
      fresh: false,
    },
  );
  add(true, "", {
    name: "FLOOR: jwtVerify + JSON.parse + JSON.stringify",
    prepare: () => bytes,
    run: floorPost(token, key, bytes),
    fresh: false,
  });

  // The handler must answer as a merchant's would, every time (not a fast 400 on a reused body).
  for (const h of [handler, noAuth, planned]) {
    for (let i = 0; i < 3; i++) {
      const response = (await h?.handle(request)) as { status: number } | undefined;
      if (response && response.status !== 200) {
        throw new Error(`the handler answered ${response.status}, not 200`);
      }
    }
  }
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(
    `SendOrderToMerchant, ${PRODUCTS} products (${bytes.byteLength} B), one call at a time; per stage ${WARMUP_MS} ms of warm-up, then ${ROUNDS} rounds of ${BATCH} calls (median; p10–p90 of rounds)`,
  );
  out(`node ${process.version}; library from src/ (not the build)`);
  for (const line of missing) out(`  not loaded: ${line}`);
  out("");
  const timings: Timing[] = [];
  const partNames = new Set(
    stages.flatMap((st) => (typeof st !== "string" && st.part ? [st.name] : [])),
  );
  for (const stage of stages) {
    if (typeof stage === "string") {
      out(`  ${stage}`);
      continue;
    }
    try {
      const t = await time(stage);
      timings.push(t);
      out(
        `  ${t.name.padEnd(62)} ${t.wallUs.toFixed(1).padStart(8)} µs  (${t.p10.toFixed(1)}–${t.p90.toFixed(1)})  cpu ${t.cpuUs.toFixed(1).padStart(7)} µs`,
      );
    } catch (error) {
      out(`  ${stage.name}: failed (${(error as Error).message})`);
    }
  }
  const whole = timings.find((t) => t.name.startsWith("WHOLE handler.handle (auth: false)"));
  const floor = timings.find((t) => t.name.startsWith("FLOOR"));
  const withAuth = timings.find((t) => t.name.startsWith("WHOLE handler.handle (with"));
  if (withAuth && floor) {
    out("");
    out(
      `  handler / floor (one at a time): ${(withAuth.wallUs / floor.wallUs).toFixed(2)}x wall, ${(withAuth.cpuUs / floor.cpuUs).toFixed(2)}x cpu`,
    );
  }
  if (whole) {
    const parts = timings.filter((t) => partNames.has(t.name));
    const sum = parts.reduce((a, t) => a + t.wallUs, 0);
    const cpuSum = parts.reduce((a, t) => a + t.cpuUs, 0);
    const rest = whole.wallUs - sum;
    out(
      `  stages after authentication, measured alone, add up to ${sum.toFixed(1)} µs of the ${whole.wallUs.toFixed(1)} µs handler without auth; ${rest >= 0 ? `the rest (${rest.toFixed(1)} µs) is the handler's own glue (URL, headers, context, awaits) and the GC of it all` : "more than the whole: noise (see the p10–p90), or stages that run faster inside the handler"}`,
    );
    out(
      `  in CPU time: ${cpuSum.toFixed(1)} µs of ${whole.cpuUs.toFixed(1)} µs (on a busy machine the CPU column is the steadier one; below ~2 µs it is mostly the cost of reading the clock)`,
    );
  }
}

await main();
