// The dashboard's requests (dashboard/API.md): all same-origin, all under /v1/dashboard/, one
// place for fetch, the CSRF header and errors. Every call gives a value, never an exception:
// `{ok: true, value}` or a Failure with the HTTP status (0 when no answer came), the server's
// message, the request member it names (`field`) and, for 429, the seconds to wait.
//
// Secrets (passwords, codes, invitation tokens) only ever go in JSON bodies; the URLs carry
// filters, cursors and ids. The CSRF token lives in this module's closure: never in storage,
// a cookie, a URL or the DOM.

import { NO_FILTERS, query, type Filters } from "./format";
import type { PageName } from "./router";

/** The part of `fetch` the client uses (a test passes its own). */
export type Fetch = (
  url: string,
  init: { method: string; headers: { [name: string]: string }; body?: string; credentials: "same-origin"; cache: "no-store" },
) => Promise<{ status: number; headers: { get(name: string): string | null }; json(): Promise<unknown> }>;

/** A request that did not give its answer. */
export interface Failure {
  ok: false;
  /** The HTTP status; 0 when the server could not be reached. */
  status: number;
  /** The server's message ("" when it gave none). */
  message: string;
  /** The JSON member or query parameter the server names (400), or null. */
  field: string | null;
  /** Seconds to wait (429), or null. */
  retryAfter: number | null;
}

export type Result<T> = { ok: true; status: number; message: string; value: T } | Failure;

export type Role = "owner" | "developer" | "viewer";
export type Environment = "sandbox" | "production";

export interface Me {
  member: { id: string; email: string; role: Role };
  partner: { id: string; name: string; environment: Environment };
  permissions: { keys: boolean; widget: boolean; webhooks: boolean; team: boolean };
}

export interface TwoFactorSetup {
  qrCode: string;
  manualKey: string;
  issuer: string;
  accountName: string;
}

export interface Invitation {
  email: string;
  role: Role;
  partnerName: string;
  expiresAt: string;
}

/** `sign-in`'s answer: the code step next, or the authenticator's setup. */
export type SignInNext = { next: "code" } | { next: "setup"; twoFactor: TwoFactorSetup };

export interface Overview {
  environment: Environment;
  widgetApproved: boolean;
  checklist: { originRegistered: boolean; sandboxOrderPlaced: boolean; webhookAnswered: boolean };
}

export interface MaskedKey {
  prefix: string;
  last4: string;
}

export interface Keys {
  publishableKey: string;
  secretKey: MaskedKey;
  previousKey: (MaskedKey & { expiresAt: string }) | null;
}

export type Expiry = "now" | "1h" | "24h" | "7d";

export interface Rolled {
  secretKey: string;
  previousKey: (MaskedKey & { expiresAt: string }) | null;
}

export interface WidgetSettings {
  publishableKey: string;
  widgetText: string | null;
  widgetButtonURL: string | null;
  widgetOrigins: string[];
  approved: boolean;
  snippets: { script: string; iframe: string };
  previewUrl: string;
}

export interface WidgetChanges {
  widgetText?: string | null;
  widgetButtonURL?: string | null;
  widgetOrigins?: string[];
}

/** Unix seconds in the server's order records; RFC 3339 elsewhere. */
export type Time = number | string;

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
  createdAt: Time;
  updatedAt: Time;
}

/** A page's cursor: a string (orders, lists, deliveries) or a number (audit `seq`). */
export type Cursor = string | number | null;

export interface Counts {
  enabled: number;
  notEnabled: number;
  locked: number;
  kycWithout2fa: number;
  lowRecoveryCodes: number;
}

export type ContactListKind = "kyc-without-2fa" | "locked" | "low-recovery-codes";

export interface Contact {
  contactId: string;
  twoFactor: "enabled" | "not_enabled" | "locked";
  recoveryCodesRemaining: number | null;
}

export interface Endpoint {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  createdAt: Time;
}

export interface Attempt {
  messageId: string;
  event: string;
  at: Time;
  attempt: number;
  status: number | null;
  error: string | null;
  latencyMs: number | null;
}

export interface AuditEvent {
  seq: number;
  id: string;
  at: Time;
  contactId: string | null;
  actor: string;
  event: string;
  details: unknown;
}

export interface Verification {
  ok: boolean;
  rows: number;
  firstBadSeq: number | null;
}

export interface Member {
  id: string;
  email: string;
  role: Role;
  twoFactor: boolean;
  createdAt: Time;
}

export interface PendingInvitation {
  id: string;
  email: string;
  role: Role;
  expiresAt: string;
}

type Body = { [key: string]: unknown };
type Shape = (body: Body) => boolean;

function isObject(value: unknown): value is Body {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const hasString = (name: string): Shape => (b) => typeof b[name] === "string";
const hasArray = (name: string): Shape => (b) => Array.isArray(b[name]);
const hasObject = (name: string): Shape => (b) => isObject(b[name]);
const any: Shape = () => true;

export const BASE = "/v1/dashboard";

function queryString(params: [string, string | number | null | undefined][]): string {
  const q = query(params);
  return q ? "?" + q : "";
}

const ordersPath = (filters: Filters, cursor: Cursor, limit?: number) =>
  "/orders" + queryString([["status", filters.status], ["coin", filters.coin], ["from", filters.from], ["to", filters.to], ["contactId", filters.contactId], ["limit", limit], ["cursor", cursor]]);
const auditPath = (after: Cursor, limit?: number) => "/audit" + queryString([["after", after], ["limit", limit]]);

/** The GET each page starts with: the app asks for it beside `/me` when the dashboard opens on
 * that page, so the two round trips overlap. */
export const FIRST_GET: { [P in PageName]: string } = {
  overview: "/overview",
  keys: "/keys",
  widget: "/widget",
  orders: ordersPath(NO_FILTERS, null),
  contacts: "/contacts",
  webhooks: "/webhooks",
  audit: auditPath(null),
  team: "/team",
};

/** The dashboard's client. `fetcher` is the browser's fetch (or a test's). */
export function createApi(fetcher: Fetch) {
  let csrf: string | null = null;
  /** GETs started ahead of need (`prefetch`): the next GET of the same path takes the answer. */
  const ahead = new Map<string, ReturnType<Fetch>>();

  const send = (method: string, path: string, headers: { [name: string]: string }, body: unknown) =>
    fetcher(BASE + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      cache: "no-store",
    });
  const GET_HEADERS = { Accept: "application/json" };

  async function call<T>(method: string, path: string, body: unknown, shape: Shape): Promise<Result<T>> {
    const headers: { [name: string]: string } = { ...GET_HEADERS };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (method !== "GET" && csrf) headers["X-CSRF-Token"] = csrf;
    const early = method === "GET" ? ahead.get(path) : undefined;
    if (early) ahead.delete(path);
    let response;
    try {
      response = await (early || send(method, path, headers, body));
    } catch {
      return { ok: false, status: 0, message: "", field: null, retryAfter: null };
    }
    let answer: unknown = null;
    try {
      answer = await response.json();
    } catch {
      answer = null;
    }
    const b: Body = isObject(answer) ? answer : {};
    const message = typeof b.message === "string" ? b.message : "";
    const status = response.status;
    if (status < 200 || status > 299 || !isObject(answer) || !shape(b)) {
      let retryAfter: number | null = null;
      if (status === 429) {
        const seconds = typeof b.retryAfter === "number" ? b.retryAfter : parseInt(response.headers.get("Retry-After") || "", 10);
        retryAfter = seconds > 0 ? Math.ceil(seconds) : 1;
      }
      const ok = status >= 200 && status <= 299;
      return {
        ok: false,
        status,
        message: ok ? "The server gave an unexpected answer." : message,
        field: typeof b.field === "string" && b.field ? b.field : null,
        retryAfter,
      };
    }
    // Any answer that carries the session's CSRF token (me, the sign-in and setup answers)
    // replaces the one held: later state changes send it.
    if (typeof b.csrfToken === "string" && b.csrfToken) csrf = b.csrfToken;
    return { ok: true, status, message, value: b as unknown as T };
  }

  const get = <T>(path: string, shape: Shape) => call<T>("GET", path, undefined, shape);
  const post = <T>(path: string, body: unknown, shape: Shape = any) => call<T>("POST", path, body === undefined ? {} : body, shape);
  const id = (value: string | number) => encodeURIComponent(String(value));
  const page = queryString;
  const twoFactor = (b: Body) => isObject(b.twoFactor) && typeof b.twoFactor.qrCode === "string" && typeof b.twoFactor.manualKey === "string";

  return {
    /** Forgets the CSRF token (after sign-out or when the session ended) and any answer asked
     * for ahead. */
    forget(): void {
      csrf = null;
      ahead.clear();
    },
    /** Starts the GET of `path` now; the next GET of the same path takes its answer instead of
     * asking again. A failure to connect waits for that GET too. */
    prefetch(path: string): void {
      if (ahead.has(path)) return;
      const started = send("GET", path, { ...GET_HEADERS }, undefined);
      started.catch(() => undefined);
      ahead.set(path, started);
    },
    /** Drops the answers asked for ahead that no GET took. */
    dropPrefetched(): void {
      ahead.clear();
    },
    /** Whether a CSRF token is held (never the token itself). */
    hasCsrf(): boolean {
      return csrf !== null;
    },

    // ---- session ---------------------------------------------------------------------------
    me: () => get<{ me: Me }>("/me", hasObject("me")),
    invitation: (token: string) => post<{ invitation: Invitation }>("/invitation", { token }, hasObject("invitation")),
    acceptInvitation: (token: string, password: string) =>
      post<{ twoFactor: TwoFactorSetup }>("/invitation/accept", { token, password }, twoFactor),
    enableTwoFactor: (code: string) => post<{ recoveryCodes: string[] }>("/setup/enable", { code }, hasArray("recoveryCodes")),
    signIn: (email: string, password: string) =>
      post<SignInNext>("/sign-in", { email, password }, (b) => b.next === "code" || (b.next === "setup" && twoFactor(b))),
    /** The second step, with the authenticator's code or a recovery code. */
    signInCode: (code: string, recovery: boolean) =>
      post<{ me: Me }>("/sign-in/code", recovery ? { recoveryCode: code } : { code }, hasObject("me")),
    signOut: async (): Promise<Result<Body>> => {
      const answer = await post<Body>("/sign-out", undefined);
      if (answer.ok || answer.status === 401) csrf = null;
      return answer;
    },

    // ---- pages -----------------------------------------------------------------------------
    overview: () => get<Overview>(FIRST_GET.overview, hasObject("checklist")),
    keys: () => get<Keys>(FIRST_GET.keys, (b) => typeof b.publishableKey === "string" && isObject(b.secretKey)),
    rollKey: (expiresIn: Expiry) => post<Rolled>("/keys/roll", { expiresIn }, hasString("secretKey")),
    widget: () => get<WidgetSettings>(FIRST_GET.widget, (b) => hasObject("snippets")(b) && hasArray("widgetOrigins")(b)),
    saveWidget: (changes: WidgetChanges) =>
      call<WidgetSettings>("PUT", "/widget", changes, (b) => hasObject("snippets")(b) && hasArray("widgetOrigins")(b)),
    orders: (filters: Filters, cursor: Cursor, limit?: number) =>
      get<{ orders: Order[]; next: Cursor }>(ordersPath(filters, cursor, limit), hasArray("orders")),
    contacts: () => get<{ counts: Counts }>(FIRST_GET.contacts, hasObject("counts")),
    contactList: (kind: ContactListKind, cursor: Cursor, limit?: number) =>
      get<{ contacts: Contact[]; next: Cursor }>("/contacts/list" + page([["kind", kind], ["cursor", cursor], ["limit", limit]]), hasArray("contacts")),
    webhooks: () => get<{ endpoints: Endpoint[]; events: string[] }>(FIRST_GET.webhooks, (b) => hasArray("endpoints")(b) && hasArray("events")(b)),
    addWebhook: (url: string, events: string[]) =>
      post<{ endpoint: Endpoint; secret: string }>("/webhooks", { url, events }, (b) => hasObject("endpoint")(b) && hasString("secret")(b)),
    deleteWebhook: (endpoint: string) => call<Body>("DELETE", "/webhooks/" + id(endpoint), undefined, any),
    rotateWebhookSecret: (endpoint: string) => post<{ secret: string }>("/webhooks/" + id(endpoint) + "/rotate-secret", undefined, hasString("secret")),
    testWebhook: (endpoint: string) => post<{ messageId: string }>("/webhooks/" + id(endpoint) + "/test", undefined),
    deliveries: (endpoint: string, before: Cursor, limit?: number) =>
      get<{ attempts: Attempt[]; next: Cursor }>("/webhooks/" + id(endpoint) + "/deliveries" + page([["before", before], ["limit", limit]]), hasArray("attempts")),
    resend: (messageId: string) => post<Body>("/webhooks/messages/" + id(messageId) + "/resend", undefined),
    audit: (after: Cursor, limit?: number) =>
      get<{ events: AuditEvent[]; next: Cursor; verification: Verification }>(auditPath(after, limit), (b) => hasArray("events")(b) && hasObject("verification")(b)),
    team: () => get<{ members: Member[]; invitations: PendingInvitation[] }>(FIRST_GET.team, (b) => hasArray("members")(b) && hasArray("invitations")(b)),
    invite: (email: string, role: Role) => post<{ link: string; expiresAt: string }>("/team/invitations", { email, role }, hasString("link")),
    revokeInvitation: (invitation: string) => call<Body>("DELETE", "/team/invitations/" + id(invitation), undefined, any),
    setRole: (member: string, role: Role) => call<Body>("PUT", "/team/members/" + id(member), { role }, any),
    removeMember: (member: string) => call<Body>("DELETE", "/team/members/" + id(member), undefined, any),
  };
}

export type Api = ReturnType<typeof createApi>;
