// The widget page's pure modules, compiled from src/page: the origin rule (against the core's
// own unit-test cases, read from core/src/widget/origins.rs), reading options from the query
// (against the shared vectors tests/vectors/widget/parse.json), the message sender, the
// screen plan for the three modes, and the checkout's steps from the session's state.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { REPO_DIR, importSource, vectors } from "./helpers.mjs";

const { originAllowed } = await importSource("page/origin");
const { parseQuery, decodeComponent } = await importSource("page/query");
const { Messenger, readHello } = await importSource("page/messenger");
const flow = await importSource("page/flow");
const { holdTimes } = await importSource("page/checkout");
const { buildUrl } = await importSource("url");

describe("origin rule: the core's origin_allowed", () => {
  // Every assertion of `who_may_talk_to_the_page` in core/src/widget/origins.rs, run here.
  const source = readFileSync(join(REPO_DIR, "core/src/widget/origins.rs"), "utf8");
  const body = /fn who_may_talk_to_the_page\(\) \{([\s\S]*?)\n    \}/.exec(source)[1];
  const registered = [...body.matchAll(/"([^"]+)"\.to_owned\(\)/g)].map((m) => m[1]);
  const cases = [...body.matchAll(/assert!\((!?)origin_allowed\("([^"]*)", &registered, ([SP])\)\);/g)].map((m) => ({
    want: m[1] !== "!",
    origin: m[2],
    environment: m[3] === "S" ? "sandbox" : "production",
  }));

  test("the Rust cases are found", () => {
    assert.deepEqual(registered, ["https://shop.example.com"]);
    assert.ok(cases.length >= 10, `${cases.length} cases`);
  });

  for (const { want, origin, environment } of cases) {
    test(`${want ? "allows" : "refuses"} ${origin} in ${environment}`, () => {
      assert.equal(originAllowed(origin, registered, environment), want);
    });
  }

  test("ports, prefixes and look-alikes", () => {
    const S = "sandbox";
    for (const ok of ["http://localhost", "http://localhost:0", "http://localhost:65535", "http://127.0.0.1:00080", "http://127.0.0.1:8080"]) {
      assert.ok(originAllowed(ok, [], S), ok);
    }
    for (const bad of [
      "http://localhost:65536",
      "http://localhost:",
      "http://localhost:+80",
      "http://localhost:123456",
      "https://localhost:3000",
      "http://localhost:3000/",
      "http://127.0.0.1.evil.example",
      "http://127.0.0.2",
      "http://LOCALHOST:3000",
      "",
    ]) {
      assert.ok(!originAllowed(bad, [], S), bad);
    }
    assert.ok(!originAllowed("http://localhost:3000", [], "production"));
    assert.ok(originAllowed("http://localhost:3000", ["http://localhost:3000"], "production"), "a registered origin is exact, any environment");
  });
});

describe("options from the query (shared vectors parse.json)", () => {
  const file = vectors("widget/parse.json");
  for (const c of file.cases) {
    if (c.error === "url_unknown_root" || c.error === "url_invalid" || c.config) continue;
    test(c.name, () => {
      const search = new URL(c.url.replace(/^https:\/\/WIDGET\.Rampart\.network:443\?/, "https://widget.rampart.network/?")).search;
      const hash = c.url.includes("#") ? "#" + c.url.split("#")[1] : "";
      if (c.error === "url_invalid_encoding") {
        assert.throws(() => parseQuery(search), URIError);
        return;
      }
      const options = parseQuery(search + hash);
      assert.deepEqual(options, c.options);
      if (c.canonical) {
        const root = c.canonical.split("?")[0];
        assert.equal(buildUrl(root, options), c.canonical);
      }
    });
  }

  test("the loader's canonical URL reads back to the same options", () => {
    const q =
      "publicKey=pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc&clientName=%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E&tokens=btc%2Ceth" +
      "&receiveAddressBtc=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq&homeScreenMessage=%22%3C%2Fscript%3E&darkTheme=true" +
      "&currencies=eur&amount=20&showRampartLogo=false";
    const options = parseQuery("?" + q);
    assert.deepEqual(options, {
      publicKey: "pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc",
      clientName: "<img src=x onerror=alert(1)>",
      tokens: "btc,eth",
      receiveAddress: { btc: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq" },
      homeScreenMessage: '"</script>',
      darkTheme: true,
      currencies: "eur",
      amount: "20",
      showRampartLogo: false,
    });
    assert.equal(buildUrl("https://w.example/widget/", options), "https://w.example/widget/?" + q);
  });

  test("decoding: + is a space, malformed % stays, bad UTF-8 throws", () => {
    assert.equal(decodeComponent("a+b%20c"), "a b c");
    assert.equal(decodeComponent("100%"), "100%");
    assert.equal(decodeComponent("%zz"), "%zz");
    assert.throws(() => decodeComponent("%FF"), URIError);
  });
});

describe("messages: the page's sender", () => {
  const ID = "0123456789abcdef0123456789abcdef";
  const hello = (extra = {}) => ({ source: "rampart-widget", version: 1, type: "hello", instanceId: ID, seq: 1, payload: {}, ...extra });

  function setup({ top = false } = {}) {
    const posted = [];
    const listeners = [];
    const parent = { postMessage: (data, origin) => posted.push({ data, origin }) };
    const win = { addEventListener: (type, fn) => listeners.push(fn) };
    win.parent = top ? win : parent;
    let greeted = 0;
    const m = new Messenger(win, () => greeted++);
    const send = (event) => listeners.forEach((fn) => fn(event));
    return { m, posted, parent, send, greeted: () => greeted };
  }

  test("nothing is posted without a hello", () => {
    const { m, posted } = setup();
    assert.equal(m.link, "none");
    assert.equal(m.connect(() => true), "none");
    m.ready("https://w.example/widget/?publicKey=pk_sandbox_x");
    m.screen("home");
    m.resize(400);
    m.error("not_approved", "x");
    assert.deepEqual(posted, []);
  });

  test("after an allowed hello: to that origin only, seq from 1, the hello's instanceId", () => {
    const { m, posted, parent, send, greeted } = setup();
    send({ source: parent, origin: "https://shop.example.com", data: hello({ seq: 7 }) });
    assert.equal(greeted(), 1);
    assert.equal(m.link, "waiting");
    assert.equal(m.connect((o) => o === "https://shop.example.com"), "connected");
    m.ready("https://w.example/widget/?publicKey=pk_sandbox_x");
    m.screen("coin");
    m.resize(412.2);
    m.resize(413); // the same whole height: not sent again
    m.resize(0);
    m.resize(500);
    assert.deepEqual(
      posted.map((p) => [p.origin, p.data.type, p.data.seq, p.data.instanceId, p.data.source, p.data.version]),
      [
        ["https://shop.example.com", "ready", 1, ID, "rampart-widget", 1],
        ["https://shop.example.com", "screen", 2, ID, "rampart-widget", 1],
        ["https://shop.example.com", "resize", 3, ID, "rampart-widget", 1],
        ["https://shop.example.com", "resize", 4, ID, "rampart-widget", 1],
      ],
    );
    assert.deepEqual(posted.map((p) => p.data.payload), [{ url: "https://w.example/widget/?publicKey=pk_sandbox_x" }, { name: "coin" }, { height: 413 }, { height: 500 }]);
  });

  test("a disallowed origin gets nothing, ever", () => {
    const { m, posted, parent, send } = setup();
    send({ source: parent, origin: "https://evil.example", data: hello() });
    assert.equal(m.connect(() => false), "refused");
    // A second hello from an allowed origin does not reopen the conversation.
    send({ source: parent, origin: "https://shop.example.com", data: hello() });
    assert.equal(m.connect(() => true), "refused");
    m.ready("u");
    m.screen("home");
    assert.deepEqual(posted, []);
  });

  test("only the first hello counts", () => {
    const { m, posted, parent, send, greeted } = setup();
    send({ source: parent, origin: "https://shop.example.com", data: hello() });
    send({ source: parent, origin: "https://other.example", data: hello({ instanceId: "f".repeat(32) }) });
    assert.equal(greeted(), 1);
    m.connect(() => true);
    m.ready("u");
    assert.equal(posted[0].origin, "https://shop.example.com");
    assert.equal(posted[0].data.instanceId, ID);
  });

  test("a top-level page (its own parent) ignores hellos", () => {
    const { m, posted, send, greeted } = setup({ top: true });
    send({ source: undefined, origin: "https://shop.example.com", data: hello() });
    assert.equal(greeted(), 0);
    assert.equal(m.connect(() => true), "none");
    m.ready("u");
    assert.deepEqual(posted, []);
  });

  test("malformed hellos are ignored", () => {
    const parent = {};
    const good = { source: parent, origin: "https://shop.example.com", data: hello() };
    assert.ok(readHello(good, parent));
    const bad = [
      { ...good, source: {} },
      { ...good, origin: undefined },
      { ...good, data: "hello" },
      { ...good, data: hello({ source: "other" }) },
      { ...good, data: hello({ version: 2 }) },
      { ...good, data: hello({ version: "1" }) },
      { ...good, data: hello({ type: "ready" }) },
      { ...good, data: hello({ instanceId: "ABC" }) },
      { ...good, data: hello({ seq: 0 }) },
      { ...good, data: hello({ seq: 1.5 }) },
      { ...good, data: hello({ payload: [] }) },
      {
        ...good,
        data: Object.defineProperty({}, "source", {
          get() {
            throw new Error("hostile");
          },
        }),
      },
    ];
    for (const event of bad) assert.equal(readHello(event, parent), null);
  });
});

describe("screen plan", () => {
  const coins = ["btc", "ltc", "eth", "usdc", "usdt", "dai", "sol"].map((symbol) => ({ symbol, name: symbol.toUpperCase() + " coin", chain: "chain" }));
  const config = { partnerName: "Acme", environment: "sandbox", approved: true, widgetText: null, widgetButtonURL: null, widgetOrigins: [], coins };
  const checked = (mode, errors = []) => ({ valid: !errors.length, errors, warnings: [], mode, options: null });
  const PK = "pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc";
  const BTC = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq";

  const NO_ORDERS = { purchases: false, session: null };

  test("standard: home, coin, amount, address, review; defaults usd and 5", () => {
    const options = { publicKey: PK };
    const plan = flow.makePlan(options, config, checked({ kind: "standard" }));
    assert.equal(plan.first, "home");
    assert.equal(plan.purchases, false, "a config without purchases: no orders");
    const sel = flow.initialSelection(options, plan);
    assert.deepEqual(sel, { coin: "btc", currency: "usd", amount: "5", addresses: {} });
    assert.deepEqual(flow.steps(plan, sel), ["coin", "amount", "address", "review"]);
    assert.equal(flow.nextStep(plan, sel, "home", NO_ORDERS), "coin");
    assert.equal(flow.nextStep(plan, sel, "address", NO_ORDERS), "review", "no orders: no sign-in");
    assert.equal(flow.previousStep(plan, sel, "coin"), "home");
    assert.equal(flow.previousStep(plan, sel, "review"), "address");
    assert.equal(plan.choices.length, 7);
  });

  test("tokens limit the choices, in their order; one token skips the coin screen", () => {
    let plan = flow.makePlan({ publicKey: PK, tokens: "sol,eth" }, config, checked({ kind: "standard" }));
    assert.deepEqual(plan.choices.map((c) => c.symbol), ["sol", "eth"]);
    plan = flow.makePlan({ publicKey: PK, tokens: "eth" }, config, checked({ kind: "standard" }));
    const sel = flow.initialSelection({ tokens: "eth" }, plan);
    assert.equal(sel.coin, "eth");
    assert.deepEqual(flow.steps(plan, sel), ["amount", "address", "review"]);
  });

  test("one-screen checkout: straight to the review, everything locked", () => {
    const options = { publicKey: PK, tokens: "btc", receiveAddress: { btc: BTC }, amount: "50" };
    const plan = flow.makePlan(options, config, checked({ kind: "oneScreenCheckout" }));
    assert.equal(plan.first, "review");
    assert.deepEqual(plan.locked, { coin: true, amount: true, address: true, currency: true });
    const sel = flow.initialSelection(options, plan);
    assert.equal(flow.previousStep(plan, sel, "review"), null);
    assert.equal(flow.previousStep(plan, sel, "signin"), null);
  });

  test("one-screen checkout on a server that takes orders: sign-in first", () => {
    const options = { publicKey: PK, tokens: "btc", receiveAddress: { btc: BTC }, amount: "50" };
    const plan = flow.makePlan(options, { ...config, purchases: true }, checked({ kind: "oneScreenCheckout" }));
    assert.equal(plan.first, "signin");
    assert.equal(plan.purchases, true);
  });

  test("one-screen checkout with an amount error: the partner's to fix", () => {
    const options = { publicKey: PK, tokens: "btc", receiveAddress: { btc: BTC }, amount: "2" };
    const error = { code: "amount_below_minimum", path: "amount", message: "amount is below the minimum purchase in the chosen currency.", value: "2" };
    const plan = flow.makePlan(options, config, checked({ kind: "oneScreenCheckout" }, [error]));
    assert.deepEqual(plan.fatal, [error]);
  });

  test("standard with an amount error: the person fixes it on the amount screen", () => {
    const error = { code: "amount_below_minimum", path: "amount", message: "m", value: "2" };
    const plan = flow.makePlan({ publicKey: PK, amount: "2" }, config, checked({ kind: "standard" }, [error]));
    assert.deepEqual(plan.fatal, []);
    assert.deepEqual(flow.issuesAt(plan.fieldIssues, "amount"), [error]);
  });

  test("incomplete: only the missing part is asked", () => {
    const cases = [
      [{ tokens: "btc", amount: "20" }, "receiveAddress", ["address", "review"]],
      [{ tokens: "btc", receiveAddress: { btc: BTC } }, "amount", ["amount", "review"]],
      [{ receiveAddress: { btc: BTC }, amount: "20" }, "tokens", ["coin", "review"]],
    ];
    for (const [given, missing, want] of cases) {
      const options = { publicKey: PK, ...given };
      const plan = flow.makePlan(options, config, checked({ kind: "incomplete", missing }));
      const sel = flow.initialSelection(options, plan);
      assert.deepEqual(flow.steps(plan, sel), want, missing);
      assert.equal(plan.first, want[0]);
      assert.equal(flow.previousStep(plan, sel, want[0]), null);
    }
  });

  test("incomplete without tokens: another coin than the address's asks for its address", () => {
    const options = { publicKey: PK, receiveAddress: { btc: BTC }, amount: "20" };
    const plan = flow.makePlan(options, config, checked({ kind: "incomplete", missing: "tokens" }));
    const sel = flow.initialSelection(options, plan);
    assert.equal(sel.coin, "btc");
    sel.coin = "eth";
    assert.deepEqual(flow.steps(plan, sel), ["coin", "address", "review"]);
  });

  test("the summary URL is the canonical one-screen checkout URL of the choices", () => {
    const options = { publicKey: PK, clientName: "Acme Shop", tokens: "btc,eth", darkTheme: true };
    const sel = { coin: "btc", currency: "eur", amount: "25.50", addresses: { btc: BTC, eth: "0x0" } };
    assert.equal(
      flow.summaryUrl("https://w.example/widget/", options, sel, config),
      `https://w.example/widget/?publicKey=${PK}&clientName=Acme%20Shop&tokens=btc&receiveAddressBtc=${BTC}&darkTheme=true&currencies=eur&amount=25.50`,
    );
    sel.currency = "usd";
    assert.ok(!flow.summaryUrl("https://w.example/widget/", options, sel, config).includes("currencies"), "usd not given, not written");
  });
});

describe("checkout steps from the session's state", () => {
  const state = (extra = {}) => ({ signedIn: true, email: "a@example.com", kycPassed: false, twoFactor: "none", mayPurchase: true, environment: "sandbox", ...extra });
  const coins = ["btc", "eth"].map((symbol) => ({ symbol, name: symbol, chain: "c" }));
  const config = { partnerName: "Acme", environment: "sandbox", approved: true, widgetText: null, widgetButtonURL: null, widgetOrigins: [], coins, purchases: true };
  const plan = flow.makePlan({ publicKey: "pk_sandbox_x" }, config, { valid: true, errors: [], warnings: [], mode: { kind: "standard" }, options: null });
  const sel = flow.initialSelection({}, plan);

  test("no orders on this server: the review, never a sign-in, never Buy", () => {
    for (const session of [null, state(), state({ signedIn: false, twoFactor: null, mayPurchase: false }), state({ twoFactor: "verify", mayPurchase: false })]) {
      const access = { purchases: false, session };
      assert.equal(flow.checkoutStep(access), "review");
      assert.equal(flow.mayBuy(access), false);
    }
  });

  test("sign-in until signed in, then the 2FA step the session asks for, then the review", () => {
    const cases = [
      [null, "signin", false],
      [state({ signedIn: false, email: null, twoFactor: null, mayPurchase: false }), "signin", false],
      [state({ twoFactor: "verify", mayPurchase: false }), "twofactor", false],
      [state({ twoFactor: "setup", kycPassed: true, mayPurchase: false }), "setup", false],
      [state({ twoFactor: "none" }), "review", true],
      [state({ twoFactor: "passed" }), "review", true],
      [state({ twoFactor: "none", mayPurchase: false }), "review", false],
      // Buy is never offered while the 2FA step is open, whatever mayPurchase says.
      [state({ twoFactor: "verify", mayPurchase: true }), "twofactor", false],
      [state({ twoFactor: "setup", mayPurchase: true }), "setup", false],
    ];
    for (const [session, step, buy] of cases) {
      const access = { purchases: true, session };
      assert.equal(flow.checkoutStep(access), step, JSON.stringify(session));
      assert.equal(flow.mayBuy(access), buy, JSON.stringify(session));
    }
  });

  test("the last part leads to the checkout's step; back from the sign-in goes to the last part, from a 2FA screen to the review", () => {
    assert.equal(flow.nextStep(plan, sel, "address", { purchases: true, session: null }), "signin");
    assert.equal(flow.nextStep(plan, sel, "address", { purchases: true, session: state({ twoFactor: "verify" }) }), "twofactor");
    assert.equal(flow.nextStep(plan, sel, "address", { purchases: true, session: state() }), "review");
    assert.equal(flow.nextStep(plan, sel, "home", { purchases: true, session: state() }), "coin", "earlier parts are not skipped");
    for (const step of ["signin", "review"]) assert.equal(flow.previousStep(plan, sel, step), "address", step);
    // The 2FA screens go back to the review (which leads to them again), a recovery code to the
    // authenticator code; the codes shown once and the confirmation have no way back.
    for (const step of ["twofactor", "setup", "newcodes"]) assert.equal(flow.previousStep(plan, sel, step), "review", step);
    assert.equal(flow.previousStep(plan, sel, "recover"), "twofactor");
    assert.equal(flow.previousStep(plan, sel, "codes"), null);
    assert.equal(flow.previousStep(plan, sel, "confirmation"), null);
    const one = flow.makePlan({ publicKey: "pk_sandbox_x" }, config, { valid: true, errors: [], warnings: [], mode: { kind: "oneScreenCheckout" }, options: null });
    assert.equal(flow.previousStep(one, sel, "setup"), "review", "also in a one-screen checkout");
  });

  test("the hold's end: local time with its zone, and UTC unless the local time is UTC", () => {
    const zone = process.env.TZ;
    try {
      const until = new Date("2026-11-27T18:00:00Z");
      process.env.TZ = "Europe/Berlin";
      const berlin = holdTimes(until);
      assert.match(berlin.local, /2026/);
      assert.match(berlin.local, /(7:00|19:00)/, "19:00 in Berlin");
      assert.doesNotMatch(berlin.local, /UTC$/);
      assert.equal(berlin.utc, "2026-11-27 18:00 UTC");
      process.env.TZ = "UTC";
      const utc = holdTimes(until);
      assert.match(utc.local, /(6:00|18:00).*UTC$/);
      assert.equal(utc.utc, null, "said once");
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  test("the purchase hold and the recovery codes left, from the session", () => {
    assert.equal(flow.holdUntil(null), null);
    assert.equal(flow.holdUntil(state()), null, "an older server says nothing");
    assert.equal(flow.holdUntil(state({ purchaseHoldUntil: null })), null);
    assert.equal(flow.holdUntil(state({ purchaseHoldUntil: "not a time" })), null);
    assert.equal(flow.holdUntil(state({ signedIn: false, purchaseHoldUntil: "2026-11-27T18:00:00Z" })), null);
    assert.equal(flow.holdUntil(state({ purchaseHoldUntil: "2026-11-27T18:00:00Z", mayPurchase: false })).toISOString(), "2026-11-27T18:00:00.000Z");
    const cases = [
      [state({ twoFactor: "passed", recoveryCodesRemaining: 3 }), 3],
      [state({ twoFactor: "passed", recoveryCodesRemaining: 0 }), 0],
      [state({ twoFactor: "passed", recoveryCodesRemaining: 4 }), null],
      [state({ twoFactor: "passed" }), null],
      [state({ twoFactor: "verify", recoveryCodesRemaining: 1 }), null],
      [state({ twoFactor: "none", recoveryCodesRemaining: 0 }), null],
      [null, null],
    ];
    for (const [session, want] of cases) assert.equal(flow.fewCodesLeft(session), want, JSON.stringify(session));
  });

  test("an order's 400 names the part to change", () => {
    assert.equal(flow.orderIssuePart("amount is not valid: amount is below the minimum purchase in the chosen currency."), "amount");
    assert.equal(flow.orderIssuePart("currencies is not valid: x"), "amount");
    assert.equal(flow.orderIssuePart("tokens is not valid: x"), "coin");
    assert.equal(flow.orderIssuePart("receiveAddress.btc is not valid: The bech32 checksum does not match"), "address");
    assert.equal(flow.orderIssuePart("options are not valid"), null);
    assert.equal(flow.orderIssuePart(""), null);
  });
});

describe("the order messages", () => {
  test("order.created then order.completed / order.failed, {orderId} and {orderId, status} only", () => {
    const posted = [];
    const listeners = [];
    const parent = { postMessage: (data, origin) => posted.push({ data, origin }) };
    const win = { parent, addEventListener: (type, fn) => listeners.push(fn) };
    const m = new Messenger(win, () => {});
    assert.equal(m.origin, null, "no hello: no origin");
    m.order("o-0", "completed");
    assert.deepEqual(posted, [], "nothing before a hello");
    listeners.forEach((fn) => fn({ source: parent, origin: "https://shop.example.com", data: { source: "rampart-widget", version: 1, type: "hello", instanceId: "a".repeat(32), seq: 1, payload: {} } }));
    assert.equal(m.origin, null, "not yet allowed");
    m.connect(() => true);
    assert.equal(m.origin, "https://shop.example.com");
    m.order("o-1", "completed");
    m.order("o-2", "failed");
    m.order("o-3", "created");
    assert.deepEqual(posted.map((p) => [p.data.type, p.data.payload, p.origin]), [
      ["order.created", { orderId: "o-1" }, "https://shop.example.com"],
      ["order.completed", { orderId: "o-1", status: "completed" }, "https://shop.example.com"],
      ["order.created", { orderId: "o-2" }, "https://shop.example.com"],
      ["order.failed", { orderId: "o-2", status: "failed" }, "https://shop.example.com"],
      ["order.created", { orderId: "o-3" }, "https://shop.example.com"],
    ]);
  });
});

describe("the widget session's requests (api.ts)", async () => {
  const api = await importSource("page/api");
  const TOKEN = "ws_unit-test-token-0123456789";
  const STATE = { signedIn: false, email: null, kycPassed: false, twoFactor: null, mayPurchase: false, environment: "sandbox" };
  const reply = (status, body, headers = {}) => ({ status, headers: { get: (n) => headers[n] ?? null }, json: async () => body });

  test("open: POST {publicKey, origin}; the token only in the Authorization header, never on the object", async () => {
    const seen = [];
    const fetcher = async (url, init) => {
      seen.push({ url, init });
      if (url === "../v1/widget/session") return reply(200, { message: "Widget session opened.", code: 200, token: TOKEN, idleTimeout: 1800, session: STATE });
      return reply(200, { message: "Sign-in code sent.", code: 200, expiresIn: 600, sandboxCode: "123456" });
    };
    const opened = await api.openSession(fetcher, "pk_sandbox_x", null);
    assert.equal(opened.ok, true);
    assert.deepEqual(JSON.parse(seen[0].init.body), { publicKey: "pk_sandbox_x", origin: null });
    assert.equal(seen[0].init.headers.Authorization, undefined);
    assert.deepEqual(opened.value.state, STATE);
    assert.ok(!JSON.stringify(opened.value).includes(TOKEN) && !Object.values(opened.value.session).some((v) => typeof v === "string"), "the token is in no property");
    const sent = await opened.value.session.requestCode("a@example.com");
    assert.equal(sent.ok, true);
    assert.equal(sent.value.sandboxCode, "123456");
    assert.equal(seen[1].url, "../v1/widget/session/email");
    assert.deepEqual(seen[1].init.headers, { Authorization: "Bearer " + TOKEN, "Content-Type": "application/json", Accept: "application/json" });
    assert.deepEqual(JSON.parse(seen[1].init.body), { email: "a@example.com" });
  });

  test("failures are values with status, message and Retry-After seconds", async () => {
    const answers = [
      reply(200, { message: "Widget session opened.", code: 200, token: TOKEN, idleTimeout: 1800, session: STATE }),
      reply(429, { message: "Too many failed 2FA attempts, try again in 31 seconds", code: 429 }, { "Retry-After": "31" }),
      reply(423, { message: "2FA is locked after too many failed attempts", code: 423 }),
      reply(401, { message: "Widget session expired, sign in again", code: 401 }),
    ];
    const fetcher = async () => answers.shift() || Promise.reject(new TypeError("Failed to fetch"));
    const { value } = await api.openSession(fetcher, "pk_sandbox_x", "https://shop.example.com");
    assert.deepEqual((await value.session.verify("123456")).failure, { kind: "rate_limited", status: 429, message: "Too many failed 2FA attempts, try again in 31 seconds", seconds: 31 });
    assert.deepEqual((await value.session.enableTwoFactor("123456")).failure, { kind: "http", status: 423, message: "2FA is locked after too many failed attempts" });
    assert.deepEqual((await value.session.buy({ coin: "btc", amount: "5", currency: "usd", address: "x" })).failure, { kind: "http", status: 401, message: "Widget session expired, sign in again" });
    assert.deepEqual((await value.session.state()).failure, { kind: "network", status: 0, message: "" });
  });
});
