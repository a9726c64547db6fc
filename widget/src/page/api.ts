// The page's requests, all same-origin and relative to the page (`<public-url>/widget/`):
// `GET ../v1/widget/config?publicKey=`, `POST ../v1/widget/check?target=url`, and the widget
// session's (SPEC 6.3, docs/DESIGN.md "Widget purchase flow"): open, sign-in, the 2FA step
// (verify by authenticator or recovery code, setup, new recovery codes: SPEC 8.3), the sandbox
// KYC mark and the order. Every outcome is a value, never an exception: the screens
// decide what to show. Every failure carries the HTTP status (0: no answer), the server's
// message and, for 429, the `Retry-After` seconds.

import { encode } from "../url";
import type { Options } from "./query";

/** One coin of the server's registry. */
export interface Coin {
  symbol: string;
  name: string;
  chain: string;
}

/** `GET /v1/widget/config`: what the page needs about the partner (no secret). */
export interface Config {
  partnerName: string;
  environment: string;
  approved: boolean;
  widgetText: string | null;
  widgetButtonURL: string | null;
  widgetOrigins: string[];
  coins: Coin[];
  /** Whether this server takes orders (false in production on the example server, and when an
   * older server does not say). */
  purchases?: boolean;
}

/** One problem from the core's validation. */
export interface Issue {
  code: string;
  path: string;
  message: string;
  value?: string | null;
  suggestion?: string | null;
}

/** `POST /v1/widget/check`: the core's validation result. */
export interface Check {
  valid: boolean;
  errors: Issue[];
  warnings: Issue[];
  mode: { kind: string; missing?: string };
  options: Options | null;
}

/** A request that did not give its answer: `status` is the HTTP status (0 when none came),
 * `message` the body's (`""` when it had none). */
export type Failure =
  | { kind: "not_found"; status: number; message: string }
  | { kind: "rate_limited"; status: number; message: string; seconds: number }
  | { kind: "network"; status: number; message: string }
  | { kind: "http"; status: number; message: string };

export type Outcome<T> = { ok: true; value: T } | { ok: false; failure: Failure };

/** The part of `fetch` the page uses (a test passes its own). */
export type Fetch = (url: string, init?: { method?: string; headers?: { [name: string]: string }; body?: string }) => Promise<{
  status: number;
  headers: { get(name: string): string | null };
  json(): Promise<unknown>;
}>;

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function request<T>(fetcher: Fetch, url: string, init: Parameters<Fetch>[1], shape: (body: { [key: string]: unknown }) => boolean): Promise<Outcome<T>> {
  let response;
  try {
    response = await fetcher(url, init);
  } catch {
    return { ok: false, failure: { kind: "network", status: 0, message: "" } };
  }
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const message = isObject(body) && typeof body.message === "string" ? body.message : "";
  if (response.status === 429) {
    const seconds = parseInt(response.headers.get("Retry-After") || "", 10);
    return { ok: false, failure: { kind: "rate_limited", status: 429, message, seconds: seconds > 0 ? seconds : 1 } };
  }
  if (response.status === 404) return { ok: false, failure: { kind: "not_found", status: 404, message } };
  if (response.status !== 200 || !isObject(body) || !shape(body)) {
    return { ok: false, failure: { kind: "http", status: response.status, message: message || "The server gave an unexpected answer." } };
  }
  return { ok: true, value: body as unknown as T };
}

/** `GET ../v1/widget/config?publicKey=`. */
export function getConfig(fetcher: Fetch, publicKey: string): Promise<Outcome<Config>> {
  return request<Config>(
    fetcher,
    "../v1/widget/config?publicKey=" + encode(publicKey),
    { method: "GET", headers: { Accept: "application/json" } },
    (b) => typeof b.partnerName === "string" && typeof b.approved === "boolean" && Array.isArray(b.coins) && Array.isArray(b.widgetOrigins),
  );
}

/** `POST ../v1/widget/check?target=url` with `options` (holding the `publicKey`). */
export function check(fetcher: Fetch, options: Options): Promise<Outcome<Check>> {
  return request<Check>(
    fetcher,
    "../v1/widget/check?target=url",
    { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body: JSON.stringify(options) },
    (b) => typeof b.valid === "boolean" && Array.isArray(b.errors) && Array.isArray(b.warnings) && isObject(b.mode),
  );
}

// ---- the widget session (SPEC 6.3) ------------------------------------------------------------

/** Where the session stands (`session` in every session answer). */
export interface SessionState {
  signedIn: boolean;
  email: string | null;
  kycPassed: boolean;
  /** What the signed-in contact must do about 2FA before buying; null before sign-in. */
  twoFactor: "none" | "setup" | "verify" | "passed" | null;
  mayPurchase: boolean;
  /** When purchases resume after a 2FA reset (RFC 3339 UTC), or null (SPEC 8.2). Older
   * servers leave it out. */
  purchaseHoldUntil?: string | null;
  /** Unused recovery codes (0 when 2FA is off; SPEC 8.1). */
  recoveryCodesRemaining?: number;
  environment: string;
}

/** `POST /v1/widget/session/email`: the code is on its way (`sandboxCode` only in sandbox). */
export interface CodeSent {
  expiresIn: number;
  sandboxCode?: string | null;
}

/** `POST /v1/widget/session/2fa/create`: shown once, on the setup screen only. */
export interface TwoFactorSetup {
  qrCode: string;
  manual: string;
}

/** What the person buys (the review screen's values). */
export interface OrderRequest {
  coin: string;
  amount: string;
  currency: string;
  address: string;
}

/** A stored order, as the server answers it. */
export interface Order {
  orderId: string;
  contactId: string;
  coin: string;
  amount: string;
  currency: string;
  address: string;
  price: string;
  quantity: string;
  status: string;
  createdAt: number;
  updatedAt: number;
}

/** The answers that carry the session's state. */
export interface WithState {
  session: SessionState;
}

/** Enable's answer: the session and the recovery codes, shown once (SPEC 8.1). */
export interface Enabled extends WithState {
  recoveryCodes?: string[];
}

/** Regenerate's answer: a new set of recovery codes, shown once. */
export interface NewCodes {
  details: { recoveryCodes: string[] };
}

/** A list of recovery codes as the server gives them (strings), or null. */
export function recoveryCodes(value: unknown): string[] | null {
  return Array.isArray(value) && value.length > 0 && value.every((c) => typeof c === "string" && c.length > 0) ? (value as string[]) : null;
}

/** A widget session. Its bearer token lives only in this object's closure: never in a URL,
 * storage, a cookie, the DOM, a log or a message to the parent. */
export interface Session {
  /** `GET ../v1/widget/session`. */
  state(): Promise<Outcome<WithState>>;
  /** `POST ../v1/widget/session/email {email}`. */
  requestCode(email: string): Promise<Outcome<CodeSent>>;
  /** `POST ../v1/widget/session/signin {email, code}`. */
  signIn(email: string, code: string): Promise<Outcome<WithState>>;
  /** `POST ../v1/widget/session/2fa/verify {token}`. */
  verify(code: string): Promise<Outcome<WithState>>;
  /** `POST ../v1/widget/session/2fa/verify {recoveryCode}`: turns 2FA off (the purchase hold
   * starts). */
  recover(recoveryCode: string): Promise<Outcome<WithState>>;
  /** `POST ../v1/widget/session/2fa/create {}`. */
  createTwoFactor(): Promise<Outcome<TwoFactorSetup>>;
  /** `POST ../v1/widget/session/2fa/enable {token}`. */
  enableTwoFactor(code: string): Promise<Outcome<Enabled>>;
  /** `POST ../v1/widget/session/2fa/recoveryCodes {token}`. */
  newRecoveryCodes(code: string): Promise<Outcome<NewCodes>>;
  /** `POST ../v1/widget/session/kyc {}` (sandbox only). */
  markKyc(): Promise<Outcome<WithState>>;
  /** `POST ../v1/widget/session/orders {coin, amount, currency, address}`. */
  buy(order: OrderRequest): Promise<Outcome<{ order: Order }>>;
}

function isState(value: unknown): value is SessionState {
  return isObject(value) && typeof value.signedIn === "boolean" && typeof value.mayPurchase === "boolean";
}

const withState = (b: { [key: string]: unknown }): boolean => isState(b.session);

/**
 * `POST ../v1/widget/session {publicKey, origin}`: opens a session for the partner's key and the
 * embedding page's origin (the loader's hello's, or null at the top level).
 */
export async function openSession(fetcher: Fetch, publicKey: string, origin: string | null): Promise<Outcome<{ session: Session; state: SessionState }>> {
  const opened = await request<{ token: string; session: SessionState }>(
    fetcher,
    "../v1/widget/session",
    { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body: JSON.stringify({ publicKey, origin }) },
    (b) => typeof b.token === "string" && b.token.length > 0 && withState(b),
  );
  if (!opened.ok) return opened;
  const token = opened.value.token;
  const call = <T>(method: string, path: string, body: unknown, shape: (b: { [key: string]: unknown }) => boolean): Promise<Outcome<T>> =>
    request<T>(
      fetcher,
      "../v1/widget/session" + path,
      {
        method,
        headers: { Authorization: "Bearer " + token, "Content-Type": "application/json", Accept: "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      },
      shape,
    );
  const session: Session = {
    state: () => call("GET", "", undefined, withState),
    requestCode: (email) => call("POST", "/email", { email }, (b) => typeof b.message === "string"),
    signIn: (email, code) => call("POST", "/signin", { email, code }, withState),
    verify: (code) => call("POST", "/2fa/verify", { token: code }, withState),
    recover: (recoveryCode) => call("POST", "/2fa/verify", { recoveryCode }, withState),
    createTwoFactor: () => call("POST", "/2fa/create", {}, (b) => typeof b.qrCode === "string" && typeof b.manual === "string"),
    enableTwoFactor: (code) => call("POST", "/2fa/enable", { token: code }, withState),
    newRecoveryCodes: (code) => call("POST", "/2fa/recoveryCodes", { token: code }, (b) => isObject(b.details) && !!recoveryCodes(b.details.recoveryCodes)),
    markKyc: () => call("POST", "/kyc", {}, withState),
    buy: (order) =>
      call("POST", "/orders", { coin: order.coin, amount: order.amount, currency: order.currency, address: order.address }, (b) => isObject(b.order) && typeof b.order.orderId === "string"),
  };
  return { ok: true, value: { session, state: opened.value.session } };
}
