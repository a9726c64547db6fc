// The screens' pure helpers (src/format.ts): the CSV link of exactly the applied filters, the
// manual key in groups, where an error is shown, failures in words, times.
import assert from "node:assert/strict";
import { test } from "node:test";
import { importSource } from "./helpers.mjs";

const f = await importSource("format");
const NONE = { status: "", coin: "", from: "", to: "", contactId: "" };

test("the CSV link with no filter asks for every order", () => {
  assert.equal(f.csvHref(NONE), "/v1/dashboard/orders.csv?");
});

test("the CSV link carries exactly the filters, in a fixed order, encoded, never limit or cursor", () => {
  assert.equal(
    f.csvHref({ status: "completed", coin: "BTC", from: "2025-01-01", to: "2025-01-31", contactId: "0190-ab" }),
    "/v1/dashboard/orders.csv?status=completed&coin=BTC&from=2025-01-01&to=2025-01-31&contactId=0190-ab",
  );
  assert.equal(f.csvHref({ ...NONE, coin: " eth " }), "/v1/dashboard/orders.csv?coin=eth", "trimmed");
  assert.equal(f.csvHref({ ...NONE, to: "2025-02-01" }), "/v1/dashboard/orders.csv?to=2025-02-01");
  assert.equal(f.csvHref({ ...NONE, coin: "A&B=C D/é" }), "/v1/dashboard/orders.csv?coin=A%26B%3DC%20D%2F%C3%A9");
  assert.doesNotMatch(f.csvHref({ status: "failed", coin: "x", from: "2025-01-01", to: "2025-01-02", contactId: "y" }), /limit|cursor/);
});

test("query: empty values are left out", () => {
  assert.equal(f.query([["a", ""], ["b", null], ["c", undefined], ["d", 0], ["e", "x y"]]), "d=0&e=x%20y");
  assert.equal(f.query([]), "");
});

test("the manual key in groups of four", () => {
  assert.equal(f.groupKey("JBSWY3DPEHPK3PXP"), "JBSW Y3DP EHPK 3PXP");
  assert.equal(f.groupKey("JBSWY3DPEHPK3PXPAB"), "JBSW Y3DP EHPK 3PXP AB");
  assert.equal(f.groupKey(" JBSW Y3DP\nEH "), "JBSW Y3DP EH", "spaces in the key are not characters");
  assert.equal(f.groupKey("ABC"), "ABC");
  assert.equal(f.groupKey(""), "");
});

test("a secret key is shown as prefix, ellipsis, last 4", () => {
  assert.equal(f.maskKey({ prefix: "sk_sandbox_", last4: "Ab3d" }), "sk_sandbox_\u2026Ab3d");
});

test("an error goes next to the field the answer names, else above the buttons", () => {
  const fields = ["widgetText", "widgetButtonURL", "widgetOrigins"];
  assert.equal(f.fieldFor({ field: "widgetOrigins" }, fields), "widgetOrigins");
  assert.equal(f.fieldFor({ field: "widgetOrigins[3]" }, fields), "widgetOrigins", "a list's member: the list's box");
  assert.equal(f.fieldFor({ field: "widgetOrigins[x]" }, fields), null);
  assert.equal(f.fieldFor({ field: "widgetButtonURL" }, fields), "widgetButtonURL");
  assert.equal(f.fieldFor({ field: null }, fields), null, "no field: the form's alert");
  assert.equal(f.fieldFor({ field: "limit" }, ["status", "coin", "from", "to", "contactId"]), null, "a member the form has no field for");
  assert.equal(f.fieldFor({ field: "toString" }, fields), null, "no inherited names");
  assert.equal(f.fieldFor({ field: "password" }, ["new-password"], { password: "new-password" }), "new-password", "an alias");
});

test("failures in words: no answer, throttle, the server's message, a fallback", () => {
  assert.equal(f.failureText({ status: 0, message: "", retryAfter: null }), "Could not reach the server. Check your connection and try again.");
  assert.equal(f.failureText({ status: 429, message: "Too many attempts.", retryAfter: 17 }), "Too many attempts. Try again in 17 seconds.");
  assert.equal(f.failureText({ status: 403, message: "Your role (viewer) cannot do this.", retryAfter: null }), "Your role (viewer) cannot do this.");
  assert.equal(f.failureText({ status: 409, message: "A team needs at least one owner.", retryAfter: null }), "A team needs at least one owner.");
  assert.match(f.failureText({ status: 502, message: "", retryAfter: null }), /server had a problem \(502\)/);
});

test("allowed origins: one per line, trimmed, blank lines dropped", () => {
  assert.deepEqual(f.splitLines(" https://a.example \r\n\n  \nhttp://localhost:3000\n"), ["https://a.example", "http://localhost:3000"]);
  assert.deepEqual(f.splitLines(""), []);
});

test("times: unix seconds and RFC 3339, in UTC", () => {
  assert.deepEqual(f.formatTime(1735689600), { text: "2025-01-01 00:00 UTC", iso: "2025-01-01T00:00:00.000Z" });
  assert.deepEqual(f.formatTime("2025-03-04T05:06:07.890Z"), { text: "2025-03-04 05:06 UTC", iso: "2025-03-04T05:06:07.890Z" });
  assert.deepEqual(f.formatTime("2025-03-04T07:06:07+02:00"), { text: "2025-03-04 05:06 UTC", iso: "2025-03-04T05:06:07.000Z" });
  assert.deepEqual(f.formatTime("soon"), { text: "soon", iso: "" });
  assert.deepEqual(f.formatTime(null), { text: "", iso: "" });
});

test("the two passwords must match before anything is sent", () => {
  assert.equal(f.passwordMismatch("a long enough passphrase", "a long enough passphrase"), null);
  assert.equal(f.passwordMismatch("a long enough passphrase", "a long enough passphras"), "The two passwords differ.");
});
