export type {
  AuthConfig,
  AuthMethod,
  AuthModes,
  BasicCredentials,
  BodyDigestOptions,
  CallbackAuthOverrides,
  CartTokenOptions,
  HeaderSecretOptions,
  IpAllowListOptions,
  JwsAlgorithm,
  JwtKeyInput,
  JwtKeySet,
  JwtOptions,
  PublicJwk,
  ServiceEnvironment,
  UrlSecretOptions,
} from "./config.js";
export { createAuth } from "./create.js";
export type { Authenticator, AuthRequest, AuthResult, HeaderReader } from "./types.js";
