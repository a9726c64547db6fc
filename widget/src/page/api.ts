// The page's two requests, both same-origin and relative to the page (`<public-url>/widget/`):
// `GET ../v1/widget/config?publicKey=` and `POST ../v1/widget/check?target=url`. Every outcome
// is a value, never an exception: the screens decide what to show.

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

/** A request that did not give its answer. */
export type Failure =
  | { kind: "not_found"; message: string }
  | { kind: "rate_limited"; seconds: number }
  | { kind: "network" }
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
    return { ok: false, failure: { kind: "network" } };
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
    return { ok: false, failure: { kind: "rate_limited", seconds: seconds > 0 ? seconds : 1 } };
  }
  if (response.status === 404) return { ok: false, failure: { kind: "not_found", message: message || "Partner not found" } };
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
