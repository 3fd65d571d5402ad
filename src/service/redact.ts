/**
 * Keeps the merchant GUID, the password and the tokens out of everything the client hands out:
 * hook events, errors, the CLI's output. Secrets are matched case-insensitively (GUIDs compare
 * that way) and in their URL-encoded (form-encoded too) and JSON-escaped (.NET's too) forms, each
 * character in any of them (see `mixedPattern`). Card numbers (Luhn-valid, 13–19 digits, in every
 * spelling `redactCardNumbers` finds; in texts, numbers and keys) are masked as everywhere else in
 * the library: a refund's comment, or the service's text quoting one, may hold one. A successful
 * result printed by the CLI goes through {@link Redactor.data} instead, which keeps the merchant's
 * data (numbers, keys, dotted digit groups) as sent.
 */
import { redactCardNumbers, redactCardsInData } from "../core/redact.js";

export const REDACTED = "[REDACTED]";

/** Fields whose value is a credential whatever it holds. */
const SECRET_KEYS = new Set(["password", "token", "merchantguid", "authorization", "accesstoken"]);
/**
 * Tokens remembered for redaction: the current one and a few before it, besides every token a call
 * in flight holds (see {@link Redactor.hold}), which is never let go while it is held.
 */
const MAX_TOKENS = 8;
/** Shorter strings are not secrets worth masking (and masking them would mangle text). */
const MIN_SECRET_LENGTH = 4;
/** A number's text that is a whole number written in digits (not `1.5`, not `1e+21`). */
const WHOLE_NUMBER = /^-?[0-9]+$/;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class Redactor {
  readonly #fixed: string[] = [];
  /** Each token with the forms it is masked in, oldest first. */
  readonly #tokens: { readonly token: string; readonly forms: string[] }[] = [];
  /** How many calls in flight hold each token. */
  readonly #held = new Map<string, number>();
  #pattern: RegExp | undefined;

  constructor(secrets: readonly (string | undefined)[] = []) {
    for (const secret of secrets) this.#push(this.#fixed, secret);
    this.#compile();
  }

  /** Adds a token seen by the client; only the last few are kept, and those calls hold. */
  addToken(token: string | undefined): void {
    if (token === undefined || !this.#remember(token)) return;
    this.#evict();
    this.#compile();
  }

  /**
   * Keeps `token` masked until the function returned is called: a call holds the token it sends
   * until it has made its error and hook events, so that however many newer tokens are issued
   * meanwhile (short lifetimes, a storm of refusals), its own is never let go while its answer
   * may echo it. Released, it is one of the remembered tokens again, let go in its turn.
   */
  hold(token: string): () => void {
    this.#held.set(token, (this.#held.get(token) ?? 0) + 1);
    if (this.#remember(token)) this.#compile();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const count = (this.#held.get(token) ?? 1) - 1;
      if (count > 0) this.#held.set(token, count);
      else this.#held.delete(token);
      if (this.#evict()) this.#compile();
    };
  }

  /** Adds a token not remembered yet; whether it was added. */
  #remember(token: string): boolean {
    if (this.#tokens.some((entry) => entry.token === token)) return false;
    const forms: string[] = [];
    this.#push(forms, token);
    // Too short to be masked (see MIN_SECRET_LENGTH): nothing to remember.
    if (forms.length === 0) return false;
    this.#tokens.push({ token, forms });
    return true;
  }

  /** Lets the oldest tokens no call holds go, down to MAX_TOKENS of them; whether any went. */
  #evict(): boolean {
    let free = this.#tokens.filter((entry) => !this.#held.has(entry.token)).length;
    let evicted = false;
    for (let index = 0; free > MAX_TOKENS && index < this.#tokens.length; ) {
      if (this.#held.has((this.#tokens[index] as { token: string }).token)) index++;
      else {
        this.#tokens.splice(index, 1);
        free--;
        evicted = true;
      }
    }
    return evicted;
  }

  /** The text with every secret replaced and every card number masked. */
  text(text: string): string {
    return this.#secretsOut(redactCardNumbers(text));
  }

  /**
   * A deep copy with secrets replaced and card numbers masked in every string, every whole number
   * (one that changes becomes its masked text; a float is kept) and every key, and credential
   * fields masked.
   */
  value(value: unknown, depth = 0): unknown {
    return this.#copy(value, depth, (text) => this.text(text), true);
  }

  /**
   * A successful result as printed for the merchant: a deep copy with secrets replaced and card
   * numbers joined by one space, dash or `+` masked in every string and key, and credential fields
   * masked. Numbers are kept, and so are dotted digit groups: a resume `requestId` or a tracking
   * number is the merchant's data, to be used as the service sent it (the "data" rule of
   * `createRedactor`). Hook events and errors go through {@link value}.
   */
  data(value: unknown, depth = 0): unknown {
    return this.#copy(value, depth, (text) => this.#secretsOut(redactCardsInData(text)), false);
  }

  /**
   * A deep copy with the client's secrets (GUID, password, tokens) replaced in every string and
   * key, and credential fields masked; card numbers are not looked for. For an answer that carries
   * no card data but the merchant's own ids, some of which pass a card number's check (an EAN-13
   * product code, one in ten: review final-1), such as a billing summary.
   */
  secrets(value: unknown, depth = 0): unknown {
    return this.#copy(value, depth, (text) => this.#secretsOut(text), false);
  }

  /**
   * The deep copy both rules make: `clean` applied to every string and every key (an answer
   * keeps fields the library does not know: secrets and card numbers out of a key too),
   * credential fields masked, `__proto__` left out; whole numbers masked as texts only when
   * `numbers` (the wide rule).
   */
  #copy(value: unknown, depth: number, clean: (text: string) => string, numbers: boolean): unknown {
    if (typeof value === "string") return clean(value);
    if (numbers && (typeof value === "number" || typeof value === "bigint")) {
      const text = String(value);
      // A decimal point is no gap between digit groups: only a whole number may be a card number.
      if (!WHOLE_NUMBER.test(text)) return value;
      const masked = clean(text);
      return masked === text ? value : masked;
    }
    if (typeof value !== "object" || value === null) return value;
    if (depth > 64) return REDACTED;
    if (Array.isArray(value)) {
      return value.map((item) => this.#copy(item, depth + 1, clean, numbers));
    }
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (key === "__proto__") continue;
      copy[clean(key)] = SECRET_KEYS.has(key.toLowerCase())
        ? REDACTED
        : this.#copy(item, depth + 1, clean, numbers);
    }
    return copy;
  }

  #secretsOut(text: string): string {
    return this.#pattern === undefined ? text : text.replace(this.#pattern, REDACTED);
  }

  #push(list: string[], secret: string | undefined): void {
    if (typeof secret !== "string") return;
    // Also as sent in a header, its ends trimmed (a GUID from a CRLF .env ends with `\r`).
    for (const form of new Set([secret, secret.trim()])) {
      if (form.length >= MIN_SECRET_LENGTH) list.push(form);
    }
  }

  #compile(): void {
    const forms = new Set<string>();
    const mixed: { readonly pattern: string; readonly length: number }[] = [];
    for (const secret of [...this.#fixed, ...this.#tokens.flatMap((entry) => entry.forms)]) {
      forms.add(secret);
      forms.add(encodeURIComponent(secret));
      // As a JSON body carries it (the token request's password): `"` as `\"`, `\` as `\\`, a
      // control character as `\u0001`; a service echoing the body echoes that form.
      const json = JSON.stringify(secret).slice(1, -1);
      if (json !== secret) {
        forms.add(json);
        forms.add(encodeURIComponent(json));
      }
      // As the service's .NET stack writes it: System.Text.Json's default encoder (`"` as
      // `\u0022`, `+ ' & < >` and non-ASCII as `\uXXXX`) and form encoding (a space as `+`).
      forms.add(dotnetJson(secret));
      forms.add(formEncoded(secret));
      // .NET services also write a GUID without its hyphens (format "N").
      if (GUID.test(secret)) forms.add(secret.replace(/-/g, ""));
      const pattern = mixedPattern(secret);
      if (pattern !== undefined) mixed.push({ pattern, length: secret.length });
    }
    // Longest first, so a secret that begins with another is masked whole; a secret's per-character
    // pattern (its shortest match is the secret's length) before its own forms of that length.
    const entries = [
      ...mixed,
      ...[...forms].map((form) => ({ pattern: escapeRegExp(form), length: form.length })),
    ].sort((a, b) => b.length - a.length);
    this.#pattern =
      entries.length === 0
        ? undefined
        : new RegExp(entries.map((entry) => entry.pattern).join("|"), "gi");
  }
}

/** Characters no encoder the service may use writes otherwise (ASCII letters, digits, `-._`). */
const PLAIN = /^[A-Za-z0-9._-]$/;
/** A secret longer than this is matched in its whole forms only (passwords are shorter). */
const MAX_MIXED_LENGTH = 256;

/**
 * The secret as a pattern matching each of its characters in any of the ways an encoder writes
 * it, in any mix: as it is, JSON-escaped (`\"`, `\n`, `\uXXXX`: its UTF-16 units, any hex case),
 * percent-encoded (its UTF-8 bytes, any hex case; a space as `+` too), a space's `+` JSON-escaped
 * (`\u002B`: form encoding, then .NET's JSON), and a JSON escape URL-encoded (`%5C%22`). So a text
 * that encoded some characters and kept others (HttpUtility.UrlEncode keeps `!*()`,
 * encodeURIComponent `!'()*~`) is found whichever they were. Undefined for a secret whose every
 * character is plain (a token), or longer than {@link MAX_MIXED_LENGTH}.
 *
 * Bounded: no group's alternative is a prefix of another (a raw `\` or `%`, the start of its own
 * escapes, is left to the whole forms, and so is a longer escape that begins with a shorter one),
 * so at most one alternative of a group matches at a place, and the pattern never backtracks into
 * a group: a match is tried in time linear in the secret's length.
 */
function mixedPattern(secret: string): string | undefined {
  const chars = [...secret];
  if (chars.length > MAX_MIXED_LENGTH || chars.every((ch) => PLAIN.test(ch))) return undefined;
  return `(?:${chars.map((ch) => (PLAIN.test(ch) ? escapeRegExp(ch) : group(ch))).join("")})`;
}

/** One character's alternatives (see {@link mixedPattern}), none a prefix of another. */
function group(ch: string): string {
  const escaped = new Set([JSON.stringify(ch).slice(1, -1), unicodeEscape(ch)]);
  if (ch === "/") escaped.add("\\/");
  const all = new Set<string>([...escaped, percentEncoded(ch)]);
  // A raw `\` or `%` begins its own escapes: left to the whole forms.
  if (ch !== "\\" && ch !== "%") all.add(ch);
  if (ch === " ") {
    all.add("+");
    all.add(unicodeEscape("+"));
  }
  for (const form of escaped) if (form !== ch) all.add(encodeURIComponent(form));
  // A form that begins with another (`%5C%22` after `%5C`) is left out, compared as the pattern
  // matches them: case-insensitively.
  const byKey = new Map<string, string>();
  for (const form of all) if (!byKey.has(form.toLowerCase())) byKey.set(form.toLowerCase(), form);
  const keys = [...byKey.keys()];
  const kept = keys.filter(
    (key, index) => !keys.some((other, at) => at !== index && key.startsWith(other)),
  );
  return `(?:${kept.map((key) => escapeRegExp(byKey.get(key) as string)).join("|")})`;
}

/** `\uXXXX` for each UTF-16 unit of the character. */
function unicodeEscape(ch: string): string {
  let out = "";
  for (let i = 0; i < ch.length; i++) {
    out += `\\u${ch.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0")}`;
  }
  return out;
}

/** Every UTF-8 byte of the character as `%XX`. */
function percentEncoded(ch: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(ch)) {
    out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * What System.Text.Json's default encoder (JavaScriptEncoder.Default, ASP.NET Core's) writes:
 * `\\` for `\`, the short escapes for `\b \f \n \r \t`, `\uXXXX` for `"`, `& ' + < > \``, the other
 * controls and everything past `~`.
 */
function dotnetJson(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text.charAt(i);
    const code = text.charCodeAt(i);
    if (ch === "\\") out += "\\\\";
    else if ("\b\f\n\r\t".includes(ch)) out += JSON.stringify(ch).slice(1, -1);
    else if (code < 0x20 || code > 0x7e || "\"&'+<>`".includes(ch)) out += unicodeEscape(ch);
    else out += ch;
  }
  return out;
}

/** Form encoding (URLSearchParams): a space as `+`, `*-._` kept, the rest percent-encoded. */
function formEncoded(text: string): string {
  return new URLSearchParams({ x: text }).toString().slice(2);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
