// The API client (src/api.ts) against a fake fetch: the routes and methods of API.md, the CSRF
// header on every state change once the token is known (and never on a GET), same-origin
// credentials, no secret in any URL, and every failure as a value, never an exception.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { importSource } from "./helpers.mjs";

const { createApi, FIRST_GET } = await importSource("api");

const ME = {
  member: { id: "m1", email: "a@example.com", role: "owner" },
  partner: { id: "p1", name: "Acme", environment: "sandbox" },
  permissions: { keys: true, widget: true, webhooks: true, team: true },
};
const TWO_FACTOR = { qrCode: "data:image/png;base64,AA==", manualKey: "JBSWY3DPEHPK3PXP", issuer: "Rampart", accountName: "a@example.com" };

/** A fake fetch: records each request; answers with `reply(url, init)` ({status, body, headers})
 * or throws when it returns "offline". */
function fakeFetch(reply = () => ({ status: 200, body: { message: "OK", code: 200 } })) {
  const calls = [];
  const fetcher = async (url, init) => {
    calls.push({ url, ...init, body: init.body === undefined ? undefined : JSON.parse(init.body) });
    const answer = reply(url, init);
    if (answer === "offline") throw new TypeError("Failed to fetch");
    const headers = answer.headers || {};
    return {
      status: answer.status,
      headers: { get: (name) => headers[name] ?? null },
      json: async () => {
        if (answer.text !== undefined) return JSON.parse(answer.text);
        return answer.body;
      },
    };
  };
  return { fetcher, calls };
}

/** An answer that fits every route's shape check. */
const EVERYTHING = {
  message: "OK",
  code: 200,
  me: ME,
  invitation: { email: "a@example.com", role: "developer", partnerName: "Acme", expiresAt: "2030-01-01T00:00:00Z" },
  twoFactor: TWO_FACTOR,
  recoveryCodes: ["A"],
  next: "code",
  checklist: {},
  publishableKey: "pk",
  secretKey: { prefix: "sk_", last4: "abcd" },
  snippets: {},
  widgetOrigins: [],
  orders: [],
  counts: {},
  contacts: [],
  endpoints: [],
  events: [],
  endpoint: {},
  secret: "whsec_x",
  attempts: [],
  verification: { ok: true, rows: 0, firstBadSeq: null },
  members: [],
  invitations: [],
  link: "http://x/dashboard/#invite=t",
  messageId: "msg",
};

describe("requests", () => {
  test("every request is same-origin, no-store, under /v1/dashboard/, JSON", async () => {
    const { fetcher, calls } = fakeFetch(() => ({ status: 200, body: EVERYTHING }));
    const api = createApi(fetcher);
    await api.me();
    await api.signIn("a@example.com", "pw");
    for (const call of calls) {
      assert.equal(call.credentials, "same-origin");
      assert.equal(call.cache, "no-store");
      assert.match(call.url, /^\/v1\/dashboard\//);
      assert.equal(call.headers.Accept, "application/json");
    }
    assert.equal(calls[0].method, "GET");
    assert.equal(calls[0].body, undefined, "a GET has no body");
    assert.equal(calls[0].headers["Content-Type"], undefined);
    assert.equal(calls[1].method, "POST");
    assert.equal(calls[1].headers["Content-Type"], "application/json");
    assert.deepEqual(calls[1].body, { email: "a@example.com", password: "pw" });
  });

  test("the routes and methods of API.md", async () => {
    const { fetcher, calls } = fakeFetch((url) => ({ status: 200, body: url.endsWith("/roll") ? { ...EVERYTHING, secretKey: "sk_new" } : EVERYTHING }));
    const api = createApi(fetcher);
    const filters = { status: "failed", coin: "BTC", from: "2025-01-01", to: "2025-01-31", contactId: "c 1" };
    const expected = [
      [() => api.me(), "GET", "/v1/dashboard/me"],
      [() => api.invitation("T"), "POST", "/v1/dashboard/invitation", { token: "T" }],
      [() => api.acceptInvitation("T", "P"), "POST", "/v1/dashboard/invitation/accept", { token: "T", password: "P" }],
      [() => api.enableTwoFactor("123456"), "POST", "/v1/dashboard/setup/enable", { code: "123456" }],
      [() => api.signIn("e", "p"), "POST", "/v1/dashboard/sign-in", { email: "e", password: "p" }],
      [() => api.signInCode("123456", false), "POST", "/v1/dashboard/sign-in/code", { code: "123456" }],
      [() => api.signInCode("ABCD-EFGH", true), "POST", "/v1/dashboard/sign-in/code", { recoveryCode: "ABCD-EFGH" }],
      [() => api.overview(), "GET", "/v1/dashboard/overview"],
      [() => api.keys(), "GET", "/v1/dashboard/keys"],
      [() => api.rollKey("24h"), "POST", "/v1/dashboard/keys/roll", { expiresIn: "24h" }],
      [() => api.widget(), "GET", "/v1/dashboard/widget"],
      [() => api.saveWidget({ widgetText: "Buy", widgetOrigins: ["https://a.example"] }), "PUT", "/v1/dashboard/widget", { widgetText: "Buy", widgetOrigins: ["https://a.example"] }],
      [() => api.orders(filters, null), "GET", "/v1/dashboard/orders?status=failed&coin=BTC&from=2025-01-01&to=2025-01-31&contactId=c%201"],
      [() => api.orders({ status: "", coin: "", from: "", to: "", contactId: "" }, "cur/1", 25), "GET", "/v1/dashboard/orders?limit=25&cursor=cur%2F1"],
      [() => api.contacts(), "GET", "/v1/dashboard/contacts"],
      [() => api.contactList("locked", "5"), "GET", "/v1/dashboard/contacts/list?kind=locked&cursor=5"],
      [() => api.webhooks(), "GET", "/v1/dashboard/webhooks"],
      [() => api.addWebhook("https://h.example/x", ["order.created"]), "POST", "/v1/dashboard/webhooks", { url: "https://h.example/x", events: ["order.created"] }],
      [() => api.deleteWebhook("e/1"), "DELETE", "/v1/dashboard/webhooks/e%2F1"],
      [() => api.rotateWebhookSecret("e1"), "POST", "/v1/dashboard/webhooks/e1/rotate-secret"],
      [() => api.testWebhook("e1"), "POST", "/v1/dashboard/webhooks/e1/test"],
      [() => api.deliveries("e1", null), "GET", "/v1/dashboard/webhooks/e1/deliveries"],
      [() => api.deliveries("e1", "older", 10), "GET", "/v1/dashboard/webhooks/e1/deliveries?before=older&limit=10"],
      [() => api.resend("msg_1"), "POST", "/v1/dashboard/webhooks/messages/msg_1/resend"],
      [() => api.audit(null), "GET", "/v1/dashboard/audit"],
      [() => api.audit(75), "GET", "/v1/dashboard/audit?after=75"],
      [() => api.team(), "GET", "/v1/dashboard/team"],
      [() => api.invite("b@example.com", "viewer"), "POST", "/v1/dashboard/team/invitations", { email: "b@example.com", role: "viewer" }],
      [() => api.revokeInvitation("i1"), "DELETE", "/v1/dashboard/team/invitations/i1"],
      [() => api.setRole("m2", "developer"), "PUT", "/v1/dashboard/team/members/m2", { role: "developer" }],
      [() => api.removeMember("m2"), "DELETE", "/v1/dashboard/team/members/m2"],
      [() => api.signOut(), "POST", "/v1/dashboard/sign-out"],
    ];
    for (const [run, method, url, body] of expected) {
      const before = calls.length;
      const answer = await run();
      assert.equal(answer.ok, true, url);
      assert.equal(calls.length, before + 1);
      const call = calls[before];
      assert.equal(call.method, method, url);
      assert.equal(call.url, url);
      if (body) assert.deepEqual(call.body, body, url);
    }
  });
});

describe("prefetch", () => {
  test("each page's first GET is the path its getter asks for", async () => {
    const { fetcher, calls } = fakeFetch(() => ({ status: 200, body: EVERYTHING }));
    const api = createApi(fetcher);
    const first = {
      overview: () => api.overview(),
      keys: () => api.keys(),
      widget: () => api.widget(),
      orders: () => api.orders({ status: "", coin: "", from: "", to: "", contactId: "" }, null),
      contacts: () => api.contacts(),
      webhooks: () => api.webhooks(),
      audit: () => api.audit(null),
      team: () => api.team(),
    };
    assert.deepEqual(Object.keys(FIRST_GET).sort(), Object.keys(first).sort());
    for (const [page, run] of Object.entries(first)) {
      await run();
      assert.equal(calls.at(-1).url, "/v1/dashboard" + FIRST_GET[page], page);
    }
  });

  test("a prefetched GET is taken once by the next GET of its path; the rest are dropped", async () => {
    let status = 200;
    const { fetcher, calls } = fakeFetch(() => ({ status, body: EVERYTHING }));
    const api = createApi(fetcher);
    api.prefetch("/overview");
    api.prefetch("/overview");
    assert.equal(calls.length, 1, "asked once however often it is prefetched");
    assert.equal(calls[0].method, "GET");
    assert.equal(calls[0].credentials, "same-origin");
    assert.equal(calls[0].cache, "no-store");
    status = 500;
    assert.equal((await api.overview()).ok, true, "the answer of the prefetch, not a new one");
    assert.equal(calls.length, 1);
    assert.equal((await api.overview()).status, 500, "taken once: the next GET asks again");
    assert.equal(calls.length, 2);
    api.prefetch("/keys");
    api.dropPrefetched();
    await api.keys();
    assert.equal(calls.length, 4, "a dropped prefetch is asked for again");
    api.prefetch("/team");
    api.forget();
    await api.team();
    assert.equal(calls.length, 6, "forget drops prefetched answers too");
  });

  test("a prefetch that cannot connect is a failure of the GET that takes it, never an exception", async () => {
    const { fetcher } = fakeFetch(() => "offline");
    const api = createApi(fetcher);
    api.prefetch("/overview");
    await new Promise((resolve) => setTimeout(resolve, 0));
    const answer = await api.overview();
    assert.equal(answer.ok, false);
    assert.equal(answer.status, 0);
  });
});

describe("CSRF", () => {
  const STATE_CHANGES = (api) => [
    () => api.rollKey("now"),
    () => api.saveWidget({ widgetText: null }),
    () => api.addWebhook("https://h.example", ["order.created"]),
    () => api.deleteWebhook("e1"),
    () => api.rotateWebhookSecret("e1"),
    () => api.testWebhook("e1"),
    () => api.resend("m1"),
    () => api.invite("b@example.com", "viewer"),
    () => api.revokeInvitation("i1"),
    () => api.setRole("m1", "viewer"),
    () => api.removeMember("m1"),
    () => api.enableTwoFactor("123456"),
    () => api.signOut(),
  ];

  test("before any token is known, no X-CSRF-Token is sent (the pre-session routes need only Origin)", async () => {
    const { fetcher, calls } = fakeFetch(() => ({ status: 200, body: { ...EVERYTHING, csrfToken: undefined } }));
    const api = createApi(fetcher);
    await api.signIn("a@example.com", "pw");
    await api.invitation("T");
    assert.equal(api.hasCsrf(), false);
    for (const call of calls) assert.equal(call.headers["X-CSRF-Token"], undefined);
  });

  for (const [name, learn] of [
    ["GET me", (api) => api.me()],
    ["the sign-in code", (api) => api.signInCode("123456", false)],
    ["the invitation's accept", (api) => api.acceptInvitation("T", "a long enough passphrase")],
  ]) {
    test(`the token from ${name} goes on every POST, PUT and DELETE, never on a GET`, async () => {
      // Only the answers API.md gives a token carry one.
      const carries = /\/(me|sign-in\/code|invitation\/accept)$/;
      const { fetcher, calls } = fakeFetch((url) => ({ status: 200, body: carries.test(url) ? { ...EVERYTHING, csrfToken: "tok-" + url } : EVERYTHING }));
      const api = createApi(fetcher);
      await learn(api);
      const token = "tok-" + calls[0].url;
      assert.equal(api.hasCsrf(), true);
      // A GET in between must not carry it.
      await api.keys();
      assert.equal(calls.at(-1).method, "GET");
      assert.equal(calls.at(-1).headers["X-CSRF-Token"], undefined);
      for (const run of STATE_CHANGES(api)) {
        const before = calls.length;
        await run();
        const call = calls[before];
        assert.notEqual(call.method, "GET");
        assert.equal(call.headers["X-CSRF-Token"], token, `${call.method} ${call.url} carries the token`);
      }
    });
  }

  test("a newer token replaces the older one", async () => {
    let n = 0;
    const { fetcher, calls } = fakeFetch(() => ({ status: 200, body: { ...EVERYTHING, csrfToken: "t" + ++n } }));
    const api = createApi(fetcher);
    await api.me();
    await api.me();
    await api.rollKey("now");
    assert.equal(calls[2].headers["X-CSRF-Token"], "t2");
  });

  test("sign-out and forget() drop the token", async () => {
    const { fetcher, calls } = fakeFetch((url) => ({ status: 200, body: url.endsWith("/me") ? { ...EVERYTHING, csrfToken: "t" } : { message: "OK", code: 200 } }));
    const api = createApi(fetcher);
    await api.me();
    await api.signOut();
    assert.equal(calls[1].headers["X-CSRF-Token"], "t");
    assert.equal(api.hasCsrf(), false);
    await api.rollKey("now");
    assert.equal(calls[2].headers["X-CSRF-Token"], undefined);
    await api.me();
    api.forget();
    await api.rollKey("now");
    assert.equal(calls[4].headers["X-CSRF-Token"], undefined);
  });

  test("a failed answer does not set a token", async () => {
    const { fetcher } = fakeFetch(() => ({ status: 401, body: { message: "Sign in to continue.", code: 401, csrfToken: "nope" } }));
    const api = createApi(fetcher);
    await api.me();
    assert.equal(api.hasCsrf(), false);
  });
});

test("no secret ever goes in a URL: passwords, codes, tokens, invitation tokens travel in bodies", async () => {
  const { fetcher, calls } = fakeFetch(() => ({ status: 200, body: { ...EVERYTHING, csrfToken: "CSRFSECRET" } }));
  const api = createApi(fetcher);
  await api.me();
  await api.invitation("INVITETOKEN");
  await api.acceptInvitation("INVITETOKEN", "PASSWORDSECRET");
  await api.enableTwoFactor("TOTPCODE1");
  await api.signIn("mail@example.com", "PASSWORDSECRET");
  await api.signInCode("TOTPCODE2", false);
  await api.signInCode("RECOVERYCODE", true);
  await api.rollKey("7d");
  await api.invite("mail2@example.com", "viewer");
  for (const call of calls) {
    for (const secret of ["INVITETOKEN", "PASSWORDSECRET", "TOTPCODE", "RECOVERYCODE", "CSRFSECRET", "mail@example.com"]) {
      assert.ok(!call.url.includes(secret), `${secret} is not in ${call.url}`);
    }
  }
  assert.ok(calls.some((c) => c.body && c.body.token === "INVITETOKEN"));
  assert.ok(calls.some((c) => c.body && c.body.password === "PASSWORDSECRET"));
});

describe("failures are values", () => {
  test("no answer: status 0", async () => {
    const api = createApi(fakeFetch(() => "offline").fetcher);
    assert.deepEqual(await api.overview(), { ok: false, status: 0, message: "", field: null, retryAfter: null });
  });

  test("400 names the field; its message is the server's", async () => {
    const api = createApi(fakeFetch(() => ({ status: 400, body: { message: "widgetOrigins has a bad origin", code: 400, field: "widgetOrigins" } })).fetcher);
    assert.deepEqual(await api.saveWidget({ widgetOrigins: ["x"] }), { ok: false, status: 400, message: "widgetOrigins has a bad origin", field: "widgetOrigins", retryAfter: null });
  });

  test("429: retryAfter from the body, else from Retry-After, at least 1", async () => {
    const body = createApi(fakeFetch(() => ({ status: 429, body: { message: "Too many attempts.", code: 429, retryAfter: 42 }, headers: { "Retry-After": "7" } })).fetcher);
    assert.equal((await body.signIn("a", "b")).retryAfter, 42);
    const header = createApi(fakeFetch(() => ({ status: 429, body: { message: "Slow down", code: 429 }, headers: { "Retry-After": "7" } })).fetcher);
    assert.equal((await header.signIn("a", "b")).retryAfter, 7);
    const none = createApi(fakeFetch(() => ({ status: 429, body: null })).fetcher);
    assert.equal((await none.signIn("a", "b")).retryAfter, 1);
  });

  test("401, 403, 404, 409, 410 and 5xx carry their status and message", async () => {
    for (const [status, message] of [[401, "Sign in to continue."], [403, "CSRF check failed."], [404, "Invitation not found or already used."], [409, "A team needs at least one owner."], [410, "Invitation has expired."], [503, ""]]) {
      const api = createApi(fakeFetch(() => ({ status, body: { message, code: status } })).fetcher);
      const answer = await api.removeMember("m1");
      assert.deepEqual(answer, { ok: false, status, message, field: null, retryAfter: null });
    }
  });

  test("a body that is not JSON, or a 200 of the wrong shape, is a failure, not a throw", async () => {
    const html = createApi(fakeFetch(() => ({ status: 502, text: "<html>Bad gateway</html>" })).fetcher);
    assert.deepEqual(await html.me(), { ok: false, status: 502, message: "", field: null, retryAfter: null });
    const shape = createApi(fakeFetch(() => ({ status: 200, body: { message: "OK", code: 200 } })).fetcher);
    const answer = await shape.keys();
    assert.equal(answer.ok, false);
    assert.equal(answer.status, 200);
    assert.equal(answer.message, "The server gave an unexpected answer.");
  });

  test("the sign-in answer's two shapes", async () => {
    const code = createApi(fakeFetch(() => ({ status: 200, body: { message: "Enter the code", code: 200, next: "code" } })).fetcher);
    assert.deepEqual((await code.signIn("a", "b")).value.next, "code");
    const setup = createApi(fakeFetch(() => ({ status: 200, body: { message: "Set up", code: 200, next: "setup", csrfToken: "t", twoFactor: TWO_FACTOR } })).fetcher);
    const answer = await setup.signIn("a", "b");
    assert.equal(answer.value.next, "setup");
    assert.deepEqual(answer.value.twoFactor, TWO_FACTOR);
    assert.equal(setup.hasCsrf(), true);
    const broken = createApi(fakeFetch(() => ({ status: 200, body: { message: "?", code: 200, next: "setup" } })).fetcher);
    assert.equal((await broken.signIn("a", "b")).ok, false, "setup without the twoFactor");
  });
});
