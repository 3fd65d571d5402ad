/**
 * Keeps the merchant GUID, the password and the tokens out of everything the client hands out:
 * hook events, errors, the CLI's output. Secrets are matched case-insensitively (GUIDs compare
 * that way) and in their URL-encoded and JSON-escaped forms too. Card numbers (Luhn-valid, 13–19 digits, in every
 * spelling `redactCardNumbers` finds; in texts, numbers and keys) are masked as everywhere else in
 * the library: a refund's comment, or the service's text quoting one, may hold one. A successful
 * result printed by the CLI goes through {@link Redactor.data} instead, which keeps the merchant's
 * data (numbers, keys, dotted digit groups) as sent.
 */
import { redactCardNumbers, redactCardsInData } from "../core/redact.js";

export const REDACTED = "[REDACTED]";

/** Fields whose value is a credential whatever it holds. */
const SECRET_KEYS = new Set(["password", "token", "merchantguid", "authorization", "accesstoken"]);
/** Tokens remembered for redaction: the current one and a few before it. */
const MAX_TOKENS = 8;
/** Shorter strings are not secrets worth masking (and masking them would mangle text). */
const MIN_SECRET_LENGTH = 4;
/** A number's text that is a whole number written in digits (not `1.5`, not `1e+21`). */
const WHOLE_NUMBER = /^-?[0-9]+$/;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class Redactor {
  readonly #fixed: string[] = [];
  readonly #tokens: string[] = [];
  #pattern: RegExp | undefined;

  constructor(secrets: readonly (string | undefined)[] = []) {
    for (const secret of secrets) this.#push(this.#fixed, secret);
    this.#compile();
  }

  /** Adds a token seen by the client; only the last few are kept. */
  addToken(token: string | undefined): void {
    if (token === undefined || this.#tokens.includes(token)) return;
    this.#push(this.#tokens, token);
    if (this.#tokens.length > MAX_TOKENS) this.#tokens.shift();
    this.#compile();
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
    for (const secret of [...this.#fixed, ...this.#tokens]) {
      forms.add(secret);
      forms.add(encodeURIComponent(secret));
      // As a JSON body carries it (the token request's password): `"` as `\"`, `\` as `\\`, a
      // control character as `\u0001`; a service echoing the body echoes that form.
      const json = JSON.stringify(secret).slice(1, -1);
      if (json !== secret) {
        forms.add(json);
        forms.add(encodeURIComponent(json));
      }
      // .NET services also write a GUID without its hyphens (format "N").
      if (GUID.test(secret)) forms.add(secret.replace(/-/g, ""));
    }
    const sorted = [...forms].sort((a, b) => b.length - a.length);
    this.#pattern =
      sorted.length === 0 ? undefined : new RegExp(sorted.map(escapeRegExp).join("|"), "gi");
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
