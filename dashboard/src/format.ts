// Pure helpers the screens share (no DOM, tested in test/format.test.mjs): query strings and
// the CSV link, the manual key in groups, failures as words, times and masked keys.

/** The Orders page's filters, as typed (strings; "" for none). */
export interface Filters {
  status: string;
  coin: string;
  from: string;
  to: string;
  contactId: string;
}

export const NO_FILTERS: Filters = { status: "", coin: "", from: "", to: "", contactId: "" };

/** The filters' names, in the order the query string lists them. */
export const FILTER_NAMES: (keyof Filters)[] = ["status", "coin", "from", "to", "contactId"];

/** `a=1&b=2` from `params`, each name and value percent-encoded; null, undefined and "" left out. */
export function query(params: [string, string | number | null | undefined][]): string {
  const parts: string[] = [];
  for (const [name, value] of params) {
    if (value === null || value === undefined || value === "") continue;
    parts.push(encodeURIComponent(name) + "=" + encodeURIComponent(String(value)));
  }
  return parts.join("&");
}

/** The filters with surrounding spaces gone (what the page sends). */
export function cleanFilters(filters: Filters): Filters {
  return { status: filters.status.trim(), coin: filters.coin.trim(), from: filters.from.trim(), to: filters.to.trim(), contactId: filters.contactId.trim() };
}

/** The CSV export of exactly the rows `filters` select (no limit, no cursor: every row). */
export function csvHref(filters: Filters): string {
  const f = cleanFilters(filters);
  return "/v1/dashboard/orders.csv?" + query(FILTER_NAMES.map((name) => [name, f[name]] as [string, string]));
}

/** The manual key in groups of four for reading aloud or typing (`JBSW Y3DP EHPK 3PXP`). */
export function groupKey(key: string): string {
  return (key.replace(/\s+/g, "").match(/.{1,4}/g) || []).join(" ");
}

/** A secret key as the page may show it: its prefix, an ellipsis and its last 4 characters. */
export function maskKey(key: { prefix: string; last4: string }): string {
  return key.prefix + "\u2026" + key.last4;
}

/** What a failure says to a person. `status` 0: no answer came. */
export function failureText(failure: { status: number; message: string; retryAfter: number | null }): string {
  if (failure.status === 0) return "Could not reach the server. Check your connection and try again.";
  if (failure.status === 429) return "Too many attempts. Try again in " + (failure.retryAfter || 1) + " seconds.";
  if (failure.message) return failure.message;
  if (failure.status >= 500) return "The server had a problem (" + failure.status + "). Try again in a moment.";
  return "The server refused this (" + failure.status + ").";
}

/**
 * Where a failure is shown: next to the form's field the answer names (`field`, one of the
 * form's `fields`), else above the form's buttons (`null`). `aliases` maps a server name to a
 * form field when they differ (the filters' `contactId`, say).
 */
export function fieldFor(failure: { field: string | null }, fields: string[], aliases: { [server: string]: string } = {}): string | null {
  if (!failure.field) return null;
  // A list's member (`widgetOrigins[2]`) is the list's field: one box holds the whole list.
  const given = failure.field.replace(/\[[0-9]+\]$/, "");
  const name = Object.prototype.hasOwnProperty.call(aliases, given) ? aliases[given] : given;
  return fields.indexOf(name) >= 0 ? name : null;
}

/** Allowed origins typed one per line: trimmed, blank lines dropped. */
export function splitLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

const pad = (n: number) => (n < 10 ? "0" : "") + n;

/**
 * A server time (unix seconds, or RFC 3339 text) as `2025-01-31 14:05 UTC`; `iso` for a
 * `<time datetime>`. Text that is not a time is shown as it came.
 */
export function formatTime(value: number | string | null | undefined): { text: string; iso: string } {
  if (value === null || value === undefined || value === "") return { text: "", iso: "" };
  const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
  if (isNaN(date.getTime())) return { text: String(value), iso: "" };
  const text =
    date.getUTCFullYear() + "-" + pad(date.getUTCMonth() + 1) + "-" + pad(date.getUTCDate()) + " " + pad(date.getUTCHours()) + ":" + pad(date.getUTCMinutes()) + " UTC";
  return { text, iso: date.toISOString() };
}

/** The password rules of API.md, as the invitation screen lists them. */
export const PASSWORD_RULES = [
  "At least 12 characters (at most 1024 bytes).",
  "Not a well-known password.",
  "Not containing the part of your email before the @.",
];

/** A local check before the request: the two passwords match. The server checks the rules. */
export function passwordMismatch(password: string, confirm: string): string | null {
  return password === confirm ? null : "The two passwords differ.";
}

/** The role's name as the page shows it. */
export function roleName(role: string): string {
  return role === "owner" ? "Owner" : role === "developer" ? "Developer" : role === "viewer" ? "Viewer" : role;
}

/** The environment's name as the page shows it. */
export function environmentName(environment: string): string {
  return environment === "production" ? "Production" : environment === "sandbox" ? "Sandbox" : environment;
}
