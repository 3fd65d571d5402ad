import { brandClass, isBrandedInstance } from "../core/brand.js";
import type { ServiceErrorCode, ServiceFailureKind } from "./codes.js";
import type { OperationName } from "./operations.js";

/** One problem of a request refused before it was sent (a zod issue, without the value). */
export interface ServiceIssue {
  readonly path: string;
  readonly message: string;
}

export interface ServiceErrorInit {
  /** The client method (`dispatchConsolidatedShipment`), or `getAuthenticationToken`. */
  readonly operation: OperationName;
  readonly code: ServiceErrorCode;
  readonly message: string;
  /** The HTTP status of the answer; absent when none came (network, timeout, not sent). */
  readonly status?: number | undefined;
  /** The service's request or trace id, when the answer carried one. */
  readonly requestId?: string | undefined;
  /** The service's own description of the failure (redacted). */
  readonly description?: string | undefined;
  /** How many HTTP attempts were made (0: the request never left the process). */
  readonly attempts?: number | undefined;
  /** What the service asked to wait (`Retry-After`), in milliseconds. */
  readonly retryAfterMs?: number | undefined;
  readonly issues?: readonly ServiceIssue[] | undefined;
  /** A scrubbed copy of the underlying error (never the original, which may quote a URL). */
  readonly cause?: Error | undefined;
  /** See `ServiceError.mayHaveBeenApplied`. Default false. */
  readonly mayHaveBeenApplied?: boolean | undefined;
  /** See `ServiceError.earlierInDoubt`. */
  readonly earlierInDoubt?: ServiceError | undefined;
}

/**
 * The base of every failure of the service client. Nothing in it (message, description, cause,
 * stack, JSON) carries the merchant GUID, the password or a token. `instanceof` holds for an
 * error from any copy of the library (its ES module and CommonJS builds both loaded), of the
 * class named and of its base, never of a sibling class: see `core/brand.ts`.
 */
export abstract class ServiceError extends Error {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "ServiceError");
  }
  abstract readonly kind: ServiceFailureKind;
  readonly operation: OperationName;
  readonly code: ServiceErrorCode;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly description: string | undefined;
  readonly attempts: number;
  /**
   * True when the operation is never retried (dispatch, void, parcel status, refund) and its
   * request may have reached the service without a complete answer coming back (a timeout, a
   * dropped connection, an answer cut off, a refund answer that confirms nothing, a 500, 502 or
   * 504 without a documented refusal code): it may have been applied, so check before sending it
   * again. False when nothing was sent (a refused connection, a name that does not resolve) or
   * the service's answer says what happened. True too for a refusal that may mean "already done"
   * (B002, C104…) of a request that an earlier call of the same client ended in doubt with: see
   * `earlierInDoubt`.
   */
  readonly mayHaveBeenApplied: boolean;
  /**
   * Set on a refusal that may mean "already done" (a dispatch's B002 or B100, a void's C104, a
   * refused parcel status or refund) when an earlier call of this client, of the same operation
   * with the same request, ended in doubt (`mayHaveBeenApplied`) within the last 10 minutes: that
   * call's error. The refusal may be the service saying the earlier call was applied, so this
   * error's `mayHaveBeenApplied` is true. Also this error's `cause`, when it has no other.
   */
  readonly earlierInDoubt: ServiceError | undefined;

  /**
   * `instanceof` as JavaScript does it, typed so that it narrows as {@link isServiceError} does:
   * `error instanceof ServiceError` to one of the classes (every instance is one: the class is
   * abstract), told apart by `kind`; `instanceof` any other class (`ServiceRateLimitError`, or a
   * subclass of your own, a test double) to that class. It holds for an error from any copy of
   * the library (or of a subclass): see `core/brand.ts`.
   */
  static override [Symbol.hasInstance]<C extends abstract new (...args: never) => unknown>(
    this: C,
    value: unknown,
  ): value is ServiceInstance<C> & InstanceType<C> {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class checked (a subclass's own brand), not this one
    return isBrandedInstance(this, value);
  }

  constructor(init: ServiceErrorInit) {
    const cause = init.cause ?? init.earlierInDoubt;
    super(init.message, cause === undefined ? undefined : { cause });
    // The class's documented name (`brandClass` sets it, so a bundler or minifier cannot change
    // it), or the name of a subclass of yours.
    this.name = new.target.name;
    this.operation = init.operation;
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.description = init.description;
    this.attempts = init.attempts ?? 0;
    this.mayHaveBeenApplied = init.mayHaveBeenApplied ?? false;
    this.earlierInDoubt = init.earlierInDoubt;
  }

  toJSON(): Record<string, unknown> {
    const { name, kind, code, status, operation, requestId, description, attempts } = this;
    const { mayHaveBeenApplied, message } = this;
    return {
      name,
      kind,
      code,
      status,
      operation,
      requestId,
      description,
      attempts,
      mayHaveBeenApplied,
      message,
      // Only when set: the earlier call's own JSON (redacted when it was made).
      ...(this.earlierInDoubt === undefined
        ? {}
        : { earlierInDoubt: this.earlierInDoubt.toJSON() }),
    };
  }
}

/** No answer: DNS, refused or reset connection, a connection dropped mid-answer. */
export class ServiceNetworkError extends ServiceError {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "ServiceNetworkError");
  }
  readonly kind = "network";
}

/** An attempt took longer than `timeoutMs`, or the whole call longer than `deadlineMs`. */
export class ServiceTimeoutError extends ServiceError {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "ServiceTimeoutError");
  }
  readonly kind = "timeout";
}

/** 401 / UNAUTHORIZED, a token the service refused after one refresh, or a refused token request. */
export class ServiceAuthenticationError extends ServiceError {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "ServiceAuthenticationError");
  }
  readonly kind = "authentication";
}

/** 403 / INSUFFICIENT_PERMISSIONS, or B403. */
export class ServicePermissionError extends ServiceError {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "ServicePermissionError");
  }
  readonly kind = "permission";
}

/** 404 and the not-found codes (B001, B401, B402, C104, *_NOT_FOUND). */
export class ServiceNotFoundError extends ServiceError {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "ServiceNotFoundError");
  }
  readonly kind = "not-found";
}

/** 409 IDEMPOTENCY_KEY_CONFLICT, and refusals because of a state (B002, C100, C101…). */
export class ServiceConflictError extends ServiceError {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "ServiceConflictError");
  }
  readonly kind = "conflict";
}

/**
 * A request the service (400, 422, B300…) or the client (`INVALID_REQUEST`: never sent) found
 * invalid. `issues` lists the client's findings by path, without values.
 */
export class ServiceValidationError extends ServiceError {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "ServiceValidationError");
  }
  readonly kind = "validation";
  readonly issues: readonly ServiceIssue[];
  constructor(init: ServiceErrorInit) {
    super(init);
    this.issues = init.issues ?? [];
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), issues: this.issues };
  }
}

/** 429. `retryAfterMs` is what the service asked to wait. */
export class ServiceRateLimitError extends ServiceError {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "ServiceRateLimitError");
  }
  readonly kind = "rate-limit";
  readonly retryAfterMs: number | undefined;
  constructor(init: ServiceErrorInit) {
    super(init);
    this.retryAfterMs = init.retryAfterMs;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), retryAfterMs: this.retryAfterMs };
  }
}

/** 5xx, INTERNAL_ERROR, B400/B500/B600/B700, C103, and answers that are not what the document describes. */
export class ServiceServerError extends ServiceError {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "ServiceServerError");
  }
  readonly kind = "server";
}

const CLASSES = {
  network: ServiceNetworkError,
  timeout: ServiceTimeoutError,
  authentication: ServiceAuthenticationError,
  permission: ServicePermissionError,
  "not-found": ServiceNotFoundError,
  conflict: ServiceConflictError,
  validation: ServiceValidationError,
  "rate-limit": ServiceRateLimitError,
  server: ServiceServerError,
} as const satisfies Record<ServiceFailureKind, new (init: ServiceErrorInit) => ServiceError>;

/** The error of a failure kind. */
export function createServiceError(kind: ServiceFailureKind, init: ServiceErrorInit): ServiceError {
  return new CLASSES[kind](init);
}

/**
 * Every concrete ServiceError, one per `kind`: what {@link isServiceError} narrows to, so that
 * `switch (error.kind)` reaches the members of each class (`retryAfterMs`, `issues`).
 */
export type AnyServiceError =
  | ServiceNetworkError
  | ServiceTimeoutError
  | ServiceAuthenticationError
  | ServicePermissionError
  | ServiceNotFoundError
  | ServiceConflictError
  | ServiceValidationError
  | ServiceRateLimitError
  | ServiceServerError;

/**
 * What `instanceof C` narrows to, `C` a ServiceError class: the union of the library's classes for
 * ServiceError itself (its instance type only is as wide as ServiceError's), else `C`'s instance.
 * Not `Extract<AnyServiceError, InstanceType<C>>`, which is `never` for a subclass with a member
 * of its own (`class FakeNetworkError extends ServiceNetworkError { attempt = 1 }`).
 */
type ServiceInstance<C extends abstract new (...args: never) => unknown> = [ServiceError] extends [
  InstanceType<C>,
]
  ? AnyServiceError
  : InstanceType<C>;

/**
 * Whether a value is a ServiceError, from any copy of the library: then one of its classes, told
 * apart by `kind`.
 */
export function isServiceError(value: unknown): value is AnyServiceError {
  return value instanceof ServiceError;
}
