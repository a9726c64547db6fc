// The hash router (src/router.ts): pages, the invitation fragment, and what is not a route.
import assert from "node:assert/strict";
import { test } from "node:test";
import { importSource } from "./helpers.mjs";

const { parseRoute, pageHash, pageTitle, PAGES, DEFAULT_PAGE } = await importSource("router");

test("every page's hash names it", () => {
  assert.deepEqual(
    PAGES.map((p) => p.name),
    ["overview", "keys", "widget", "orders", "contacts", "webhooks", "audit", "team"],
  );
  for (const { name } of PAGES) {
    assert.equal(pageHash(name), "#/" + name);
    assert.deepEqual(parseRoute(pageHash(name)), { kind: "page", page: name });
    assert.deepEqual(parseRoute(pageHash(name).slice(1)), { kind: "page", page: name }, "without the #");
  }
  assert.equal(pageTitle("keys"), "API keys");
});

test("a trailing slash or a query after the page still names it", () => {
  assert.deepEqual(parseRoute("#/keys/"), { kind: "page", page: "keys" });
  assert.deepEqual(parseRoute("#/orders?status=failed"), { kind: "page", page: "orders" });
});

test("anything else is the overview", () => {
  assert.equal(DEFAULT_PAGE, "overview");
  for (const hash of ["", "#", "#/", "#/nope", "#main", "#/KEYS", "#//keys", "#/keys/more", "#/key", "keys"]) {
    assert.deepEqual(parseRoute(hash), { kind: "page", page: "overview" }, JSON.stringify(hash));
  }
});

test("#invite=<token> is an invitation, the token percent-decoded", () => {
  assert.deepEqual(parseRoute("#invite=abc_DEF-123"), { kind: "invite", token: "abc_DEF-123" });
  assert.deepEqual(parseRoute("#invite=a%2Bb%3D"), { kind: "invite", token: "a+b=" });
  assert.deepEqual(parseRoute("#invite=tok&x=1"), { kind: "invite", token: "tok" }, "only the token member");
});

test("an empty or broken invitation token is still an invitation (the page says it is unusable)", () => {
  assert.deepEqual(parseRoute("#invite="), { kind: "invite", token: "" });
  assert.deepEqual(parseRoute("#invite=%E0%A4%A"), { kind: "invite", token: "" });
});
