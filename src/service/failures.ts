/** Reading a failure out of an answer: the HTTP status, the body's code, the document's tables. */
import { isRecord } from "../core/objects.js";
import { unchanged } from "../core/text.js";
import { parseSuccessValue } from "../schemas/response.js";
import {
  DISPATCH_ERROR_CODES,
  documentedCode,
  isDispatchErrorCode,
  isVoidParcelCode,
  kindOfStatus,
  type ServiceErrorCode,
  type ServiceFailureKind,
  type VoidParcelCode,
} from "./codes.js";
import type { ServiceIssue } from "./errors.js";
import type { FailureReading } from "./operations.js";

export interface FailureInfo {
  readonly kind: ServiceFailureKind;
  readonly code: ServiceErrorCode;
  readonly description?: string | undefined;
  /** The fields a ValidationProblemDetails answer names (`errors`), redacted and cut. */
  readonly issues?: readonly ServiceIssue[] | undefined;
}

/**
 * Longer service texts are cut: an error is not the place for a whole HTML page. Cut after
 * redaction (a card number or a secret the cut fell in would keep its unmasked first part), and
 * never between the two halves of a surrogate pair (a lone surrogate is not text: JSON writes it
 * as an escape, UTF-8 as U+FFFD).
 */
export const MAX_DESCRIPTION = 1000;
/** What a text of the service is passed through before it is cut (the client's redactor). */
export type Clean = (text: string) => string;
const CODE_IN_TEXT = /\b([BC]\d{3})\b/;
/**
 * The fields a text is read from, in this order: the document's PascalCase ones, then what
 * gateways and camelCase services write (review network-4: AWS API Gateway's, Kong's and Azure
 * APIM's `message`, RFC 9457's `detail`, OAuth's `error_description` and `error`).
 */
const TEXT_FIELDS = [
  "ErrorText",
  "Error",
  "ErrorMessage",
  "Message",
  "Description",
  "Reason",
  "message",
  "detail",
  "description",
  "error_description",
  "error",
];

/** The failure kind a documented code is surfaced as, if the code is documented. */
export function kindOfCode(code: unknown): ServiceFailureKind | undefined {
  return documentedCode(code)?.kind;
}

/** A text cut to `MAX_DESCRIPTION` UTF-16 units and an ellipsis; one fewer before a pair's end. */
export function cutText(value: string): string {
  if (value.length <= MAX_DESCRIPTION) return value;
  const last = value.charCodeAt(MAX_DESCRIPTION - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? MAX_DESCRIPTION - 1 : MAX_DESCRIPTION;
  return `${value.slice(0, end)}…`;
}

function text(value: unknown, clean: Clean): string | undefined {
  if (typeof value === "number") return String(value);
  if (typeof value !== "string" || value.trim() === "") return undefined;
  return cutText(clean(value));
}

function firstText(
  body: Record<string, unknown>,
  fields: readonly string[],
  clean: Clean,
): string | undefined {
  for (const field of fields) {
    const value = text(body[field], clean);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** A B- or C-code named by a field, found in a text, or known by its documented text. */
function codeOf(
  explicit: unknown,
  description: string | undefined,
  clean: Clean,
): string | undefined {
  const given = text(explicit, clean)?.trim();
  if (given !== undefined) return given;
  if (description === undefined) return undefined;
  const found = CODE_IN_TEXT.exec(description)?.[1];
  if (found !== undefined && (isDispatchErrorCode(found) || isVoidParcelCode(found))) return found;
  const normalized = description
    .trim()
    .replace(/[.\s]+$/, "")
    .toLowerCase();
  for (const [code, info] of Object.entries(DISPATCH_ERROR_CODES)) {
    if (info.text.toLowerCase() === normalized) return code;
  }
  return undefined;
}

function refusal(code: string, description: string | undefined): FailureInfo {
  return { kind: kindOfCode(code) ?? "conflict", code, description };
}

/** The entries of VoidParcel's `Errors`, read with the configured field names. */
export function voidParcelEntries(
  errors: unknown,
  names: Readonly<Record<string, string>>,
  clean: Clean = unchanged,
): { code: string | undefined; description: string | undefined }[] {
  if (!Array.isArray(errors)) return [];
  return errors.map((entry) => {
    if (!isRecord(entry)) {
      const description = text(entry, clean);
      return { code: codeOf(undefined, description, clean), description };
    }
    const description = firstText(
      entry,
      [names.errorText ?? "ErrorText", "Text", ...TEXT_FIELDS],
      clean,
    );
    const explicit = [names.errorCode ?? "ErrorCode", "Code", "code"]
      .map((field) => entry[field])
      .find((value) => text(value, unchanged) !== undefined);
    return { code: codeOf(explicit, description, clean), description };
  });
}

/** VoidParcel's warnings: the C102 entries of a successful answer. */
export function voidParcelWarnings(
  body: unknown,
  names: Readonly<Record<string, string>>,
  clean: Clean = unchanged,
): { code: VoidParcelCode; description: string | undefined }[] {
  if (!isRecord(body)) return [];
  return voidParcelEntries(body.Errors, names, clean)
    .filter((entry) => entry.code === "C102")
    .map((entry) => ({ code: "C102", description: entry.description }));
}

/**
 * A body that is one of the service's error shapes with no success flag, at any status (7.4 does
 * not show these operations' statuses): 4.9's `{error: {code, message, description}}`, 7.1's
 * `{error, code, description}` (both required there, so a success's own `code` field is not one).
 */
function errorBody(
  body: Record<string, unknown>,
  clean: Clean,
): { code: string | undefined; description: string | undefined } | undefined {
  const inner = body.error;
  if (isRecord(inner)) {
    const code = text(inner.code, clean);
    const description = text(inner.description, clean) ?? text(inner.message, clean);
    return code === undefined && description === undefined ? undefined : { code, description };
  }
  const code = text(body.code, clean);
  if (code === undefined || text(inner, unchanged) === undefined) return undefined;
  return { code, description: text(body.description, clean) ?? text(inner, clean) };
}

/** A refusal inside an answer with a 2xx status, or undefined for a success. */
export function readRefusal(
  body: unknown,
  reading: FailureReading,
  names: Readonly<Record<string, string>>,
  clean: Clean = unchanged,
): FailureInfo | undefined {
  if (!isRecord(body)) return undefined;
  const flag = parseSuccessValue(body.IsSuccess ?? body.Success);
  if (flag === true) return undefined;
  if (flag === undefined) {
    const failed = errorBody(body, clean);
    if (failed === undefined) return undefined;
    if (reading === "token") {
      return { kind: "authentication", code: "TOKEN_REFUSED", description: failed.description };
    }
    return refusal(failed.code ?? "REFUSED", failed.description);
  }
  if (reading === "token") {
    return {
      kind: "authentication",
      code: "TOKEN_REFUSED",
      description: text(body.Reason, clean),
    };
  }
  if (reading === "void") {
    const entries = voidParcelEntries(body.Errors, names, clean);
    const failure = entries.find((entry) => entry.code !== undefined && entry.code !== "C102");
    const first = failure ?? entries[0];
    return refusal(failure?.code ?? "REFUSED", first?.description);
  }
  const description = firstText(body, TEXT_FIELDS, clean);
  const code = codeOf(body.ErrorCode ?? body.Code, description, clean);
  return refusal(code ?? (reading === "dispatch" ? "B700" : "REFUSED"), description);
}

/**
 * The kind of a failure at a non-2xx status, one rule for every body shape: a 429 is a rate limit
 * whatever it names; a refused token request (the client's `TOKEN_REFUSED`) is an authentication
 * failure at any status; a documented code is its own kind (a 5xx naming B002 is that refusal, not
 * the service failing midway, as `failedMidway` reads it); any other code, or none, is the
 * status's kind (an undocumented code at a 404 is not-found, at a 5xx the server's failure).
 */
function kindAt(status: number, code: unknown): ServiceFailureKind {
  if (status === 429) return "rate-limit";
  if (code === "TOKEN_REFUSED") return "authentication";
  return kindOfCode(code) ?? kindOfStatus(status);
}

/** The field names a token refusal's description lists, at most. */
const MAX_FIELD_NAMES = 10;

/** The first keys of an object, joined, and `…` when it has more (never all of them read). */
function firstNames(errors: Record<string, unknown>): string {
  const names: string[] = [];
  for (const key in errors) {
    if (!Object.hasOwn(errors, key)) continue;
    if (names.length === MAX_FIELD_NAMES) {
      names.push("…");
      break;
    }
    names.push(key);
  }
  return names.join(", ");
}

/**
 * The fields an ASP.NET Core ValidationProblemDetails names (`errors`: field → messages), as
 * issues: the first {@link MAX_FIELD_NAMES}, each name and its messages (joined by "; ")
 * redacted and cut; undefined when there are none. Never all of them read.
 */
function problemIssues(errors: unknown, clean: Clean): ServiceIssue[] | undefined {
  if (!isRecord(errors)) return undefined;
  const issues: ServiceIssue[] = [];
  for (const key in errors) {
    if (!Object.hasOwn(errors, key)) continue;
    if (issues.length === MAX_FIELD_NAMES) break;
    const value = errors[key];
    const messages = (Array.isArray(value) ? value.slice(0, MAX_FIELD_NAMES) : [value])
      .map((item) => text(item, clean))
      .filter((item) => item !== undefined);
    issues.push({
      path: cutText(clean(key)),
      message: messages.length === 0 ? "refused" : cutText(messages.join("; ")),
    });
  }
  return issues.length === 0 ? undefined : issues;
}

/** The failure an answer with a non-2xx status reports. */
export function readErrorAnswer(
  status: number,
  body: unknown,
  reading: FailureReading,
  names: Readonly<Record<string, string>>,
  clean: Clean = unchanged,
): FailureInfo {
  const byStatus = kindOfStatus(status);
  const fallback: ServiceErrorCode = `HTTP_${status}`;
  if (!isRecord(body)) return { kind: byStatus, code: fallback };
  if (reading === "token" && status >= 400 && status < 500 && status !== 429) {
    // 5.2's validation shape: name the fields, not their values; the first few, and the whole
    // cut like every description (an answer of 10,000 names made a description of 100,000).
    const fields = isRecord(body.errors) ? firstNames(body.errors) : "";
    const title =
      text(body.title, clean) ?? text(body.Reason, clean) ?? "the token request was refused";
    return {
      kind: "authentication",
      code: "TOKEN_REFUSED",
      description: fields === "" ? title : cutText(`${title} (${clean(fields)})`),
    };
  }
  let code: string | undefined;
  let description: string | undefined;
  if (isRecord(body.error)) {
    // 4.9: {error: {code, message, description}}.
    code = text(body.error.code, clean);
    description = text(body.error.description, clean) ?? text(body.error.message, clean);
  } else if (text(body.code, unchanged) !== undefined) {
    // 7.1: {error, code, description}.
    code = text(body.code, clean);
    description = text(body.description, clean) ?? text(body.error, clean);
  } else {
    const refused = readRefusal(body, reading, names, clean);
    if (refused !== undefined && refused.code !== "REFUSED") {
      return { ...refused, kind: kindAt(status, refused.code) };
    }
    // A problem's `detail` says what happened; its `title` is often generic ("An error occurred
    // while processing your request."): the detail first (review network-4).
    description =
      text(body.detail, clean) ?? text(body.title, clean) ?? firstText(body, TEXT_FIELDS, clean);
  }
  const kind = kindAt(status, code);
  const issues = problemIssues(body.errors, clean);
  if (issues === undefined || kind === "validation") {
    return {
      kind,
      code: code ?? fallback,
      description,
      ...(issues === undefined ? {} : { issues }),
    };
  }
  // Only a ServiceValidationError carries `issues`: on an error of another kind (a 500, a 409)
  // the fields follow the service's own text in the description, so that the message and the
  // error name the same (review SECOND-HOSTILE-4: they were named in the message alone, and the
  // title was dropped from it).
  const fields = issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
  return {
    kind,
    code: code ?? fallback,
    description: cutText(description === undefined ? fields : `${description} (${fields})`),
  };
}
