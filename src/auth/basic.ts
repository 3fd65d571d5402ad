import { AuthenticationError } from "../core/errors.js";
import { isPlainObject } from "../core/objects.js";
import { hasControlCharacter } from "../core/text.js";
import { readCredentialHeader } from "./authorization.js";
import type { BasicCredentials } from "./config.js";
import { SecretDigest, sha256 } from "./digest.js";
import type { HeaderReader } from "./types.js";
import { assertKnownKeys, configError, requireString } from "./validate.js";

const BASIC = /^basic[ \t]+([A-Za-z0-9+/]+={0,2})$/i;
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

interface Credential {
  readonly username: SecretDigest;
  readonly password: SecretDigest;
}

/** HTTP Basic (RFC 7617), compared against digests so neither length nor content leaks in timing. */
export class BasicVerifier {
  private constructor(private readonly credentials: readonly Credential[]) {}

  static async compile(
    input: BasicCredentials | readonly BasicCredentials[],
    path: string,
  ): Promise<BasicVerifier> {
    const list = Array.isArray(input) ? input : [input];
    if (list.length === 0) throw configError(path, "must hold at least one credential");
    const credentials: Credential[] = [];
    for (const [index, item] of list.entries()) {
      const at = Array.isArray(input) ? `${path}[${index}]` : path;
      if (!isPlainObject(item)) throw configError(at, "must be { username, password }");
      assertKnownKeys(item, ["username", "password"], at);
      const username = requireString(item.username, `${at}.username`);
      const password = requireString(item.password, `${at}.password`);
      if (username.includes(":")) throw configError(`${at}.username`, 'cannot contain ":"');
      if (hasControlCharacter(username) || hasControlCharacter(password)) {
        throw configError(at, "cannot contain control characters");
      }
      credentials.push({
        username: await SecretDigest.of(username.normalize("NFC")),
        password: await SecretDigest.of(password.normalize("NFC")),
      });
    }
    // `this`, not the class's name: a class body that names its class is built as `class _X`
    // (esbuild), and `constructor.name` and util.inspect would say so.
    return new this(credentials);
  }

  /**
   * Accepts `Basic <base64>` (scheme in any case), decodes the base64 as UTF-8 and splits on the
   * first `:`, so the password may contain `:`. Both sides are NFC-normalised (RFC 7617 §2.1).
   */
  async verify(headers: HeaderReader): Promise<void> {
    const value = readCredentialHeader(headers, "authorization", "Authorization");
    const match = BASIC.exec(value);
    if (match === null) throw new AuthenticationError("Authorization header is not Basic");
    let decoded: string;
    try {
      const binary = atob(match[1] as string);
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      decoded = utf8.decode(bytes);
    } catch {
      throw new AuthenticationError("Basic credentials are not base64-encoded UTF-8");
    }
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new AuthenticationError("Basic credentials have no ':'");
    const [user, pass] = await Promise.all([
      sha256(decoded.slice(0, colon).normalize("NFC")),
      sha256(decoded.slice(colon + 1).normalize("NFC")),
    ]);
    // Every credential is compared, user and password both, with no early exit.
    let matched = 0;
    for (const credential of this.credentials) {
      const userOk = credential.username.matchesDigest(user) ? 1 : 0;
      const passOk = credential.password.matchesDigest(pass) ? 1 : 0;
      matched |= userOk & passOk;
    }
    if (matched === 0) throw new AuthenticationError("Basic credentials do not match");
  }
}
