// The key parameters of /testing (signServiceToken's privateKey, sendCallback's privateKey
// option) as a project passes them, for the type tests of dist/ (lib-esnext.test.ts under 5.9,
// ts7.test.ts under 7): what the runtime (jose) signs with must compile, the rest must not.

/** Keys that must compile: a Web Crypto key and Node's KeyObject, both ways Node makes one. */
const ACCEPTED = (crypto: string) => [
  "webKey",
  `${crypto}.createPrivateKey(pem)`,
  `${crypto}.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey`,
];

/** Values that are no key (a JWK jose could import, but the parameters do not say so). */
const REFUSED = (crypto: string) => [
  ["a number", "42"],
  ["an empty object", "{}"],
  ["a Buffer", 'Buffer.from("key")'],
  ["a JWK", `${crypto}.createPrivateKey(pem).export({ format: "jwk" })`],
];

/**
 * Lines passing each key to both parameters: `testing` is how the file reaches /testing's exports
 * (`""` or `"s7."`), `crypto` its name for node:crypto, `webKey` the type of its Web Crypto key
 * (the DOM's `CryptoKey` or `crypto.webcrypto.CryptoKey`), `declare` "export const" or "const".
 * A refused value is under `@ts-expect-error`, itself an error (TS2578) if the line compiles.
 */
export function keyUses(options: {
  testing: string;
  crypto: string;
  webKey: string;
  declare: string;
}): string[] {
  const { testing, crypto, webKey, declare } = options;
  const uses = (key: string, i: string) => [
    `${declare} signed${i} = ${testing}signServiceToken(${key});`,
    `${declare} sent${i} = ${testing}sendCallback("http://127.0.0.1/", "SendOrderToMerchant", { privateKey: ${key} });`,
  ];
  return [
    "declare const pem: string;",
    `declare const webKey: ${webKey};`,
    ...ACCEPTED(crypto).flatMap((key, i) => uses(key, `Key${i}`)),
    ...REFUSED(crypto).flatMap(([what, value], i) =>
      uses(value as string, `NoKey${i}`).flatMap((line) => [
        `// @ts-expect-error ${what} is not a key`,
        line,
      ]),
    ),
  ];
}
