// The built widget page (dist/page.js, or the fresh build under RAMPART_WIDGET_DIST) run in a
// hand-made fake browser (fake-page.mjs) against a fake server that answers like the example
// server's /v1/widget/config, /v1/widget/check and the widget session's routes: the screens of
// the three modes, the checkout (sign-in, 2FA, recovery codes, a recovery code, the purchase hold,
// new codes, review, order, confirmation), the explanation
// screens, the messages to the loader, escaping, accessibility wiring.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { answer, button, byTag, click, page, settle, text, type } from "./fake-page.mjs";
import { DIST_DIR } from "./helpers.mjs";

const SOURCE = readFileSync(join(DIST_DIR, "page.js"), "utf8");
const ROOT = "https://widget.example.com/widget/";
const PK = "pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc";
const BTC = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq";
const SHOP = "https://shop.example.com";
const ID = "0123456789abcdef0123456789abcdef";
const COINS = [
  ["btc", "Bitcoin", "bitcoin"],
  ["ltc", "Litecoin", "litecoin"],
  ["eth", "Ethereum", "ethereum"],
  ["usdc", "USD Coin", "ethereum"],
  ["usdt", "Tether", "ethereum"],
  ["dai", "Dai", "ethereum"],
  ["sol", "Solana", "solana"],
].map(([symbol, name, chain]) => ({ symbol, name, chain }));

function config(extra = {}) {
  return {
    message: "Widget configuration retrieved.",
    code: 200,
    partnerName: "Acme Partner",
    environment: "sandbox",
    approved: true,
    widgetText: null,
    widgetButtonURL: null,
    widgetOrigins: [SHOP],
    coins: COINS,
    ...extra,
  };
}

const AMOUNT_LOW = { code: "amount_below_minimum", path: "amount", message: "amount is below the minimum purchase in the chosen currency.", value: null, suggestion: null };
const BAD_CHECKSUM = { code: "address_bech32_checksum", message: "The bech32 checksum does not match: the address is mistyped or corrupted.", value: null, suggestion: null };

/** The check a test server gives: amounts below 5 and addresses other than BTC fail; the mode
 * follows the core's presence rule. Not a validator: just canned answers keyed on values. */
function fakeCheck(options) {
  const errors = [];
  if (options.amount !== undefined && Number(options.amount) < 5) errors.push({ ...AMOUNT_LOW, value: options.amount });
  const addresses = options.receiveAddress || {};
  for (const coin of Object.keys(addresses)) {
    if (coin === "btc" && addresses[coin] !== BTC) errors.push({ ...BAD_CHECKSUM, path: "receiveAddress.btc", value: addresses[coin] });
  }
  if (options.clientName === "") errors.push({ code: "client_name_empty", path: "clientName", message: "clientName must not be empty; leave it out to use the default name.", value: "", suggestion: null });
  const token = typeof options.tokens === "string" && options.tokens && !options.tokens.includes(",");
  const keys = Object.keys(addresses);
  const address = keys.length === 1 && (!token || keys[0] === options.tokens);
  const amount = options.amount !== undefined;
  const kind = token && address && amount ? { kind: "oneScreenCheckout" } : token + address + amount === 2 ? { kind: "incomplete", missing: !token ? "tokens" : !address ? "receiveAddress" : "amount" } : { kind: "standard" };
  return answer(200, { message: "Widget options checked.", code: 200, valid: !errors.length, errors, warnings: [], mode: kind, options: errors.length ? null : options });
}

function server({ cfg = config(), check = fakeCheck, configStatus, session } = {}) {
  return (request) => {
    if (session && (request.url === SESSION || request.url.startsWith(SESSION + "/"))) return session.handle(request);
    if (request.url.startsWith("https://widget.example.com/v1/widget/config?")) {
      if (configStatus) return configStatus(request);
      return answer(200, cfg);
    }
    if (request.url === "https://widget.example.com/v1/widget/check?target=url" && request.method === "POST") return check(request.body, request);
    throw new Error("unexpected request " + request.url);
  };
}

function open(query, opts = {}) {
  const p = page({ source: SOURCE, url: ROOT + "?" + query, server: server(opts), parent: opts.parent, clipboard: opts.clipboard, files: opts.files });
  const main = () => p.document.main;
  const h1 = () => text(byTag(main(), "h1")[0]);
  const messages = () => p.parent.posted.map((m) => m.data);
  return { ...p, main, h1, messages };
}

const Q = (extra = "") => "publicKey=" + PK + extra;

// ---- a fake widget session, answering like docs/DESIGN.md "Widget purchase flow" -------------

const SESSION = "https://widget.example.com/v1/widget/session";
/** The session tokens the fake hands out: distinctive, so a leak anywhere is found. */
const TOKEN_PREFIX = "ws_S3cr3tT0k3nNeverShown";
const QR = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABAQAAAAA3bvkkAAAACklEQVR4AWNgAAAAAgABc3UBGAAAAABJRU5ErkJggg==";
const MANUAL = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const SIGN_IN_CODE = "123456";
const TOTP = "654321";
const EXPIRED = { message: "Widget session expired, sign in again", code: 401 };
/** Recovery codes as the server writes them (SPEC 8.1): distinctive, so a leak anywhere is found. */
const CODES = Array.from({ length: 10 }, (_, i) => "7KQ2-M9XD-" + "ABCDEFGHJK"[i] + "R3T-W8YZ-4PQN-H6V" + i);
const NEW_CODES = CODES.map((c) => "N" + c.slice(1));
/** The code the fake takes as a valid recovery code. */
const RECOVERY = CODES[3];
/** When the fake's purchase hold ends. */
const HOLD = "2026-11-27T18:00:00Z";
const HOLD_MESSAGE = "Purchases are on hold until " + HOLD + " after a 2FA reset";

/**
 * The session routes. `twoFactor` / `kycPassed`: what the contact gets at sign-in. `answers`:
 * per "METHOD /path" (path after /v1/widget/session, "/" for the session itself), a function
 * (request, fake) that may return an answer instead of the fake's own. `codesLeft`: the contact's
 * recovery codes left (with 2FA on). Enable answers CODES, regenerate NEW_CODES; RECOVERY is a
 * valid recovery code: it turns 2FA off and starts the hold (HOLD).
 */
function sessionServer({ environment = "sandbox", twoFactor = "none", kycPassed = false, codesLeft = twoFactor === "verify" ? 10 : 0, answers = {} } = {}) {
  const fake = {
    opened: [],
    tokens: [],
    token: null,
    state: null,
    email: null,
    calls: [],
    /** The server forgets the session (idle timeout). */
    expire() {
      fake.token = null;
    },
  };
  const ok = (body) => answer(200, { code: 200, ...body });
  const mayPurchase = (tf) => tf === "none" || tf === "passed";
  fake.handle = (request) => {
    const path = request.url.slice(SESSION.length) || "/";
    const key = request.method + " " + path;
    fake.calls.push({ key, body: request.body, headers: request.init.headers });
    if (key === "POST /") {
      fake.opened.push(request.body);
      fake.token = TOKEN_PREFIX + fake.tokens.length;
      fake.tokens.push(fake.token);
      fake.state = { signedIn: false, email: null, kycPassed: false, twoFactor: null, mayPurchase: false, purchaseHoldUntil: null, recoveryCodesRemaining: 0, environment };
      return ok({ message: "Widget session opened.", token: fake.token, idleTimeout: 1800, session: fake.state });
    }
    if (!fake.token || request.init.headers.Authorization !== "Bearer " + fake.token) return answer(401, EXPIRED);
    if (answers[key]) {
      const given = answers[key](request, fake);
      if (given) return given;
    }
    const body = request.body || {};
    const set = (change) => (fake.state = { ...fake.state, ...change });
    switch (key) {
      case "GET /":
        return ok({ message: "Widget session.", session: fake.state });
      case "POST /email":
        if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(body.email || "")) return answer(400, { message: "email must be an email address such as name@example.com", code: 400 });
        fake.email = body.email;
        return ok({ message: "Sign-in code sent.", expiresIn: 600, ...(environment === "sandbox" ? { sandboxCode: SIGN_IN_CODE } : {}) });
      case "POST /signin":
        if (body.code !== SIGN_IN_CODE || body.email !== fake.email) return answer(401, { message: "The sign-in code is wrong", code: 401 });
        set({ signedIn: true, email: body.email, kycPassed, twoFactor, mayPurchase: mayPurchase(twoFactor), recoveryCodesRemaining: codesLeft });
        return ok({ message: "Signed in.", session: fake.state });
      case "POST /2fa/verify":
      case "POST /2fa/enable":
      case "POST /2fa/recoveryCodes":
        if (body.recoveryCode !== undefined && key === "POST /2fa/verify") {
          if (body.token !== undefined) return answer(400, { message: "Give token or recoveryCode, not both", code: 400 });
          if (body.recoveryCode.replace(/[\s-]/g, "").toUpperCase() !== RECOVERY.replace(/-/g, "")) return answer(401, { message: "Google 2FA failed", code: 401 });
          const required = fake.state.kycPassed;
          set({ twoFactor: required ? "setup" : "none", mayPurchase: false, purchaseHoldUntil: HOLD, recoveryCodesRemaining: 0 });
          return ok({ message: "Successfully disbaled 2fa!", session: fake.state });
        }
        if (!body.token) return answer(401, { message: "Google 2FA requires the token to be passed in", code: 401 });
        if (body.token !== TOTP) return answer(401, { message: "Google 2FA failed", code: 401 });
        if (key === "POST /2fa/recoveryCodes") {
          set({ recoveryCodesRemaining: 10 });
          return answer(200, { message: "Recovery codes regenerated.", code: 200, details: { recoveryCodes: NEW_CODES } }, { "Cache-Control": "no-store" });
        }
        set({ twoFactor: "passed", mayPurchase: !fake.state.purchaseHoldUntil });
        if (key === "POST /2fa/enable") {
          set({ recoveryCodesRemaining: 10 });
          return answer(200, { message: "Successfully enabled 2fa!", code: 200, session: fake.state, recoveryCodes: CODES }, { "Cache-Control": "no-store" });
        }
        return ok({ message: "2FA token is valid.", session: fake.state });
      case "POST /2fa/create":
        return answer(200, { message: "Successfully created 2fa!", code: 200, qrCode: QR, manual: MANUAL }, { "Cache-Control": "no-store" });
      case "POST /kyc":
        set({ kycPassed: true, ...(fake.state.twoFactor === "none" ? { twoFactor: "setup", mayPurchase: false } : {}) });
        return ok({ message: "Marked as KYC passed.", session: fake.state });
      case "POST /orders":
        if (fake.state.twoFactor === "verify" || fake.state.twoFactor === "setup") return answer(403, { message: "2FA is required before buying", code: 403 });
        if (fake.state.purchaseHoldUntil) return answer(403, { message: HOLD_MESSAGE, code: 403 });
        return ok({
          message: "Order completed.",
          order: {
            orderId: "0b7c3a6e-5f0d-4c8e-9d7a-2f4b6c8d0e1f",
            contactId: "9f8e7d6c-5b4a-4321-8fed-cba987654321",
            coin: body.coin,
            amount: body.amount,
            currency: body.currency,
            address: body.address,
            price: "65000.00",
            quantity: "0.00038461",
            status: "completed",
            createdAt: 1760000000,
            updatedAt: 1760000000,
          },
        });
      default:
        throw new Error("unexpected session request " + key);
    }
  };
  return fake;
}

/** A page on a server that takes orders, with a fake session. */
function shop(query, { session = sessionServer(), cfg = {}, ...opts } = {}) {
  const p = open(query, { ...opts, cfg: config({ purchases: true, ...cfg }), session });
  return { ...p, session };
}

/** Every attribute value and text of the page's document, as one string. */
function everything(document) {
  return document.documentElement
    .all()
    .map((el) => [...el.attributes.values()].join(" ") + " " + el.childNodes.filter((n) => n.nodeType === 3).map((n) => n.data).join(" ") + " " + (el._value || ""))
    .join("\n");
}

/** The element with this role under `root`. */
function role(root, name) {
  return root.all().filter((el) => el.getAttribute("role") === name);
}

/** Signs in on the sign-in screen with `email` and the sandbox code. */
async function signIn(p, email = "buyer@example.com") {
  assert.equal(p.h1(), "Sign in");
  type(p.document.getElementById("email"), email);
  click(button(p.main(), "Send code"));
  await settle();
  type(p.document.getElementById("signin-code"), SIGN_IN_CODE);
  click(button(p.main(), "Sign in"));
  await settle();
}

const ONE_SCREEN = Q("&tokens=btc&receiveAddressBtc=" + BTC + "&amount=50");

describe("standard flow", () => {
  test("home while loading shows clientName, 'Buy Crypto' and the homeScreenMessage", async () => {
    let release;
    const p = page({
      source: SOURCE,
      url: ROOT + "?" + Q("&clientName=Acme%20Shop&homeScreenMessage=Hello%20there"),
      server: (request) => (release ? server()(request) : new Promise((resolve) => (release = () => resolve(server()(request))))),
    });
    assert.equal(text(byTag(p.document.main, "h1")[0]), "Acme Shop");
    assert.match(text(p.document.main), /Hello there/);
    assert.match(text(p.document.main), /Loading/);
    assert.equal(text(byTag(p.document.app, "header")[0]), "Buy Crypto");
    assert.equal(p.requests[0].url, `https://widget.example.com/v1/widget/config?publicKey=${PK}`);
    const go = release;
    release = () => {};
    go();
    await settle();
    assert.doesNotMatch(text(p.document.main), /Loading/);
  });

  test("the logo when showRampartLogo=true; the sandbox badge", async () => {
    const p = open(Q("&showRampartLogo=true"));
    await settle();
    const header = byTag(p.document.app, "header")[0];
    assert.match(text(header), /^Rampart/);
    assert.match(text(header), /Sandbox$/);
    assert.equal(p.h1(), "Acme Partner", "no clientName: the partner's name");
  });

  test("home -> coin -> amount (minimum error next to the field) -> address (checksum error) -> summary", async () => {
    const p = open(Q(), { parent: "top" });
    await settle();
    assert.deepEqual(p.requests.map((r) => [r.method, r.url]), [
      ["GET", `https://widget.example.com/v1/widget/config?publicKey=${PK}`],
      ["POST", "https://widget.example.com/v1/widget/check?target=url"],
    ]);
    assert.deepEqual(p.requests[1].body, { publicKey: PK });
    click(button(p.main(), "Start"));
    assert.equal(p.h1(), "Choose a coin");
    assert.equal(p.document.activeElement, byTag(p.main(), "h1")[0], "focus moves to the new screen's heading");
    const radios = byTag(p.main(), "input");
    assert.deepEqual(radios.map((r) => r.value), COINS.map((c) => c.symbol));
    for (const radio of radios) {
      const label = byTag(p.main(), "label").find((l) => l.getAttribute("for") === radio.id);
      assert.ok(label, "every radio has a label");
    }
    assert.equal(byTag(p.main(), "legend").length, 1);
    radios[0].checked = true;
    radios[0].dispatch("change");
    click(button(p.main(), "Continue"));

    assert.equal(p.h1(), "How much do you want to spend?");
    const amount = p.document.getElementById("amount");
    assert.equal(amount.value, "5", "default amount 5");
    assert.equal(p.document.getElementById("currency").value, "usd", "default currency usd");
    type(amount, "2");
    click(button(p.main(), "Continue"));
    await settle();
    assert.deepEqual(p.requests.at(-1).body, { publicKey: PK, amount: "2", currencies: "usd" });
    assert.equal(p.h1(), "How much do you want to spend?");
    const field = p.document.getElementById("amount");
    assert.equal(field.getAttribute("aria-invalid"), "true");
    const error = p.document.getElementById(field.getAttribute("aria-describedby"));
    assert.equal(text(error), "amount: amount is below the minimum purchase in the chosen currency. (given: 2)");
    assert.equal(p.document.activeElement, field, "focus goes to the field in error");

    type(field, "25");
    const currency = p.document.getElementById("currency");
    currency.value = "eur";
    currency.dispatch("change");
    click(button(p.main(), "Continue"));
    await settle();
    assert.deepEqual(p.requests.at(-1).body, { publicKey: PK, amount: "25", currencies: "eur" });
    assert.equal(p.h1(), "Where should we send your Bitcoin?");
    const address = p.document.getElementById("address");
    assert.match(text(byTag(p.main(), "label").find((l) => l.getAttribute("for") === "address")), /Your Bitcoin \(BTC\) address on bitcoin/);
    type(address, "bc1qwrong");
    click(button(p.main(), "Continue"));
    await settle();
    assert.deepEqual(p.requests.at(-1).body, { publicKey: PK, tokens: "btc", receiveAddress: { btc: "bc1qwrong" } });
    const bad = p.document.getElementById("address");
    assert.equal(bad.value, "bc1qwrong", "the typed address is kept");
    assert.equal(
      text(p.document.getElementById(bad.getAttribute("aria-describedby"))),
      "receiveAddress.btc: The bech32 checksum does not match: the address is mistyped or corrupted. (given: bc1qwrong)",
    );
    type(bad, BTC);
    click(button(p.main(), "Continue"));
    await settle();

    assert.equal(p.h1(), "Your purchase");
    assert.match(text(p.main()), /CoinBitcoin \(BTC\)Change/);
    assert.match(text(p.main()), /Amount25 EURChange/);
    assert.match(text(p.main()), new RegExp("Receive address" + BTC + "Change"));
    const link = p.document.getElementById("link");
    assert.equal(link.value, `${ROOT}?publicKey=${PK}&tokens=btc&receiveAddressBtc=${BTC}&currencies=eur&amount=25`);
    assert.ok(link.hasAttribute("readonly"));
    assert.equal(byTag(p.main(), "button").filter((b) => text(b) === "Change").length, 3);
    click(button(p.main(), "Back"));
    assert.equal(p.h1(), "Where should we send your Bitcoin?");
    assert.equal(p.document.getElementById("address").value, BTC, "going back keeps the address");
  });

  test("tokens restrict the coins; Copy link uses the clipboard and says so", async () => {
    const copied = [];
    const p = open(Q("&tokens=sol%2Cbtc&receiveAddressBtc=" + BTC), { clipboard: { writeText: async (t) => copied.push(t) } });
    await settle();
    click(button(p.main(), "Start"));
    assert.deepEqual(byTag(p.main(), "input").map((r) => r.value), ["sol", "btc"]);
    const btc = byTag(p.main(), "input")[1];
    btc.checked = true;
    btc.dispatch("change");
    click(button(p.main(), "Continue"));
    click(button(p.main(), "Continue"));
    await settle();
    assert.equal(p.document.getElementById("address").value, BTC, "prefilled from receiveAddressBtc");
    click(button(p.main(), "Continue"));
    await settle();
    click(button(p.main(), "Copy link"));
    await settle();
    assert.deepEqual(copied, [`${ROOT}?publicKey=${PK}&tokens=btc&receiveAddressBtc=${BTC}&amount=5`]);
    const status = byTag(p.document.app, "div").find((d) => d.getAttribute("role") === "status");
    assert.equal(text(status), "Link copied.");
  });
});

describe("one-screen and incomplete modes", () => {
  test("one-screen checkout opens on the summary, read-only", async () => {
    const p = open(Q("&tokens=btc&receiveAddressBtc=" + BTC + "&amount=50"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    assert.match(text(p.main()), /Set by Acme Partner/);
    assert.equal(byTag(p.main(), "button").filter((b) => text(b) === "Change" || text(b) === "Back").length, 0);
    assert.equal(p.document.getElementById("link").value, `${ROOT}?publicKey=${PK}&tokens=btc&receiveAddressBtc=${BTC}&amount=50`);
  });

  test("one-screen checkout with a bad address: the partner's problem, named", async () => {
    const p = open(Q("&tokens=btc&receiveAddressBtc=bc1qnope&amount=50"));
    await settle();
    assert.equal(p.h1(), "The widget is set up wrongly");
    assert.match(text(p.main()), /receiveAddress\.btc: The bech32 checksum does not match/);
  });

  test("incomplete, address missing: only the address screen, then the summary", async () => {
    const p = open(Q("&tokens=btc&amount=20"));
    await settle();
    assert.equal(p.h1(), "Where should we send your Bitcoin?");
    assert.equal(byTag(p.main(), "button").filter((b) => text(b) === "Back").length, 0);
    assert.match(text(p.main()), /Amount: 20 USD/);
    type(p.document.getElementById("address"), BTC);
    click(button(p.main(), "Continue"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    assert.deepEqual(byTag(p.main(), "button").filter((b) => text(b) === "Change").map((b) => b.getAttribute("aria-label")), ["Change the receive address"]);
  });

  test("incomplete, amount missing: only the amount screen", async () => {
    const p = open(Q("&tokens=btc&receiveAddressBtc=" + BTC));
    await settle();
    assert.equal(p.h1(), "How much do you want to spend?");
    assert.equal(p.document.getElementById("amount").value, "5");
    click(button(p.main(), "Continue"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
  });

  test("incomplete, token missing: only the coin screen", async () => {
    const p = open(Q("&receiveAddressBtc=" + BTC + "&amount=20&currencies=gbp"));
    await settle();
    assert.equal(p.h1(), "Choose a coin");
    assert.equal(byTag(p.main(), "input").find((r) => r.checked).value, "btc", "the address's coin is preselected");
    click(button(p.main(), "Continue"));
    assert.equal(p.h1(), "Your purchase");
    assert.match(text(p.main()), /Amount20 GBPReceive/);
  });
});

describe("explanation screens", () => {
  test("unknown key (config 404) names the problem and posts nothing", async () => {
    const p = open(Q(), { configStatus: () => answer(404, { message: "Partner not found", code: 404 }) });
    p.hello(SHOP);
    await settle();
    assert.equal(p.h1(), "Unknown widget key");
    assert.match(text(p.main()), /^Unknown widget keypublicKey: Partner not found\. No partner on this server has the publishable key/);
    assert.deepEqual(p.messages(), []);
    assert.equal(p.requests.length, 1, "no check without a partner");
  });

  test("no publicKey: explained, no request", async () => {
    const p = open("apiKey=123e4567-e89b-12d3-a456-426614174000");
    await settle();
    assert.equal(p.h1(), "This widget has no key");
    assert.match(text(p.main()), /^This widget has no keypublicKey: the page address has none\./);
    assert.equal(p.requests.length, 0);
  });

  test("not UTF-8: explained", async () => {
    const p = open(Q("&clientName=%FF"));
    await settle();
    assert.equal(p.h1(), "This widget address cannot be read");
  });

  test("not approved: explained, and the loader gets error not_approved (and nothing else)", async () => {
    const p = open(Q(), { cfg: config({ environment: "production", approved: false }) });
    p.hello(SHOP);
    await settle();
    assert.equal(p.h1(), "Not available yet");
    assert.match(text(p.main()), /not approved it yet/);
    assert.deepEqual(p.parent.posted, [
      {
        targetOrigin: SHOP,
        data: { source: "rampart-widget", version: 1, type: "error", instanceId: ID, seq: 1, payload: { code: "not_approved", message: "This widget is not approved for production yet." } },
      },
    ]);
    assert.equal(p.requests.length, 1, "no check for an unapproved widget");
  });

  test("not approved, opened without a loader: explained, nothing posted", async () => {
    const p = open(Q(), { cfg: config({ environment: "production", approved: false }) });
    await settle();
    assert.equal(p.h1(), "Not available yet");
    assert.deepEqual(p.parent.posted, []);
  });

  test("network failure: a retry control that retries", async () => {
    let fail = true;
    const p = page({
      source: SOURCE,
      url: ROOT + "?" + Q(),
      server: (request) => {
        if (fail) throw new TypeError("Failed to fetch");
        return server()(request);
      },
    });
    await settle();
    const main = p.document.main;
    assert.equal(text(byTag(main, "h1")[0]), "Could not load the widget");
    const alert = main.all().find((el) => el.getAttribute("role") === "alert");
    assert.match(text(alert), /could not reach its server/);
    fail = false;
    click(button(main, "Try again"));
    await settle();
    assert.equal(text(byTag(p.document.main, "h1")[0]), "Acme Partner");
    assert.ok(button(p.document.main, "Start"));
  });

  test("429 on the options check: the wait in seconds", async () => {
    const p = open(Q(), { check: () => answer(429, { message: "Too many requests, try again in 17 seconds", code: 429 }, { "Retry-After": "17" }) });
    await settle();
    assert.equal(p.h1(), "Could not check the widget options");
    assert.match(text(p.main()), /Wait 17 seconds, then try again/);
    assert.ok(button(p.main(), "Try again"));
  });

  test("429 on a step: shown as an alert on the step, the field kept", async () => {
    let limited = false;
    const p = open(Q(), { check: (body) => (limited ? answer(429, { message: "Too many", code: 429 }, { "Retry-After": "3" }) : fakeCheck(body)) });
    await settle();
    click(button(p.main(), "Start"));
    click(button(p.main(), "Continue"));
    limited = true;
    type(p.document.getElementById("amount"), "30");
    click(button(p.main(), "Continue"));
    await settle();
    assert.equal(p.h1(), "How much do you want to spend?");
    const alert = p.main().all().find((el) => el.getAttribute("role") === "alert");
    assert.equal(text(alert), "Too many requests from this network. Wait 3 seconds, then try again.");
    assert.equal(p.document.getElementById("amount").value, "30");
    assert.equal(p.document.activeElement, button(p.main(), "Continue"));
  });

  test("options the partner must fix: every issue names its field", async () => {
    const p = open(Q("&clientName="));
    await settle();
    assert.equal(p.h1(), "The widget is set up wrongly");
    const items = byTag(p.main(), "li").map(text);
    assert.deepEqual(items, ["clientName: clientName must not be empty; leave it out to use the default name."]);
  });
});

describe("messages to the loader", () => {
  test("hello before the config: ready with the canonical URL, then screen and resize, to that origin only", async () => {
    const p = open(Q("&clientName=Acme%20Shop&tokens=btc%2Ceth"));
    p.document.app.offsetHeight = 431.5;
    p.hello(SHOP);
    assert.deepEqual(p.parent.posted, [], "nothing before the origin is known to be allowed");
    await settle();
    const posted = p.parent.posted;
    assert.ok(posted.every((m) => m.targetOrigin === SHOP));
    assert.deepEqual(posted.map((m) => [m.data.type, m.data.seq, m.data.instanceId]), [
      ["ready", 1, ID],
      ["screen", 2, ID],
      ["resize", 3, ID],
    ]);
    assert.deepEqual(posted[0].data.payload, { url: `${ROOT}?publicKey=${PK}&clientName=Acme%20Shop&tokens=btc%2Ceth` });
    assert.deepEqual(posted[1].data.payload, { name: "home" });
    assert.deepEqual(posted[2].data.payload, { height: 432 });
    p.document.app.offsetHeight = 500;
    click(button(p.main(), "Start"));
    assert.deepEqual(posted.slice(3).map((m) => [m.data.type, m.data.seq, m.data.payload]), [
      ["screen", 4, { name: "coin" }],
      ["resize", 5, { height: 500 }],
    ]);
    click(button(p.main(), "Back"));
    assert.deepEqual(posted.slice(5).map((m) => [m.data.type, m.data.payload]), [["screen", { name: "home" }]], "same height: no resize");
  });

  test("ready's URL is location.href for the loader's canonical URL", async () => {
    const query = Q("&tokens=btc&receiveAddressBtc=" + BTC + "&homeScreenMessage=%22%3C%2Fscript%3E&darkTheme=true&currencies=eur&amount=50&showRampartLogo=true");
    const p = open(query);
    p.hello("http://localhost:5173");
    await settle();
    assert.equal(p.parent.posted[0].data.payload.url, ROOT + "?" + query);
    assert.equal(p.parent.posted[0].targetOrigin, "http://localhost:5173", "sandbox: any localhost port");
    const screens = p.parent.posted.filter((m) => m.data.type === "screen").map((m) => m.data.payload.name);
    assert.deepEqual(screens, ["home", "review"], "home while the options are checked, then the one-screen review");
  });

  test("hello after the config: answered at once", async () => {
    const p = open(Q());
    await settle();
    p.hello(SHOP);
    assert.deepEqual(p.parent.posted.map((m) => m.data.type), ["ready", "screen"]);
  });

  test("a disallowed origin: nothing posted, the page says it may not be embedded", async () => {
    const p = open(Q(), { cfg: config({ environment: "production" }) });
    p.hello("http://localhost:5173");
    await settle();
    assert.deepEqual(p.parent.posted, []);
    assert.equal(p.h1(), "This site may not embed the widget");
    assert.match(text(p.main()), /widgetOrigins/);
    assert.equal(byTag(p.main(), "button").length, 0);
  });

  test("a disallowed origin after the flow started stops it", async () => {
    const p = open(Q());
    await settle();
    click(button(p.main(), "Start"));
    p.hello("https://evil.example");
    assert.equal(p.h1(), "This site may not embed the widget");
    assert.deepEqual(p.parent.posted, []);
  });

  test("without a loader (plain iframe, no hello; or top level) nothing is posted", async () => {
    const framed = open(Q("&tokens=btc&receiveAddressBtc=" + BTC + "&amount=50"));
    await settle();
    assert.equal(framed.h1(), "Your purchase");
    assert.deepEqual(framed.parent.posted, []);
    const top = open(Q(), { parent: "top" });
    top.hello(SHOP, { source: top.window });
    await settle();
    click(button(top.main(), "Start"));
    assert.equal(top.h1(), "Choose a coin");
  });

  test("a hello from another window or with a bad envelope is ignored", async () => {
    const p = open(Q());
    p.hello(SHOP, { source: {} });
    p.hello(SHOP, { data: { source: "rampart-widget", version: 2, type: "hello", instanceId: ID, seq: 1, payload: {} } });
    await settle();
    assert.deepEqual(p.parent.posted, []);
  });

  test("messages hold no user input: typed amounts and addresses stay in the page", async () => {
    const p = open(Q());
    p.hello(SHOP);
    await settle();
    click(button(p.main(), "Start"));
    click(button(p.main(), "Continue"));
    type(p.document.getElementById("amount"), "77");
    click(button(p.main(), "Continue"));
    await settle();
    type(p.document.getElementById("address"), BTC);
    click(button(p.main(), "Continue"));
    await settle();
    const all = JSON.stringify(p.parent.posted);
    assert.ok(!all.includes("77") && !all.includes(BTC), all);
    assert.deepEqual(p.parent.posted.filter((m) => m.data.type === "screen").map((m) => m.data.payload.name), ["home", "coin", "amount", "address", "review"]);
  });
});

describe("escaping and theme", () => {
  const NASTY = ['"quoted"', "</script><script>alert(1)</script>", "<img src=x onerror=alert(1)>"];
  for (const value of NASTY) {
    test(`clientName and homeScreenMessage ${JSON.stringify(value)} are text`, async () => {
      const encoded = encodeURIComponent(value).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
      const p = open(Q(`&clientName=${encoded}&homeScreenMessage=${encoded}`));
      await settle();
      assert.equal(p.h1(), value);
      const texts = p.main().all().flatMap((el) => el.childNodes.filter((n) => n.nodeType === 3).map((n) => n.data));
      assert.ok(texts.includes(value), "the value is one text node");
      assert.ok(p.document.documentElement.all().every((el) => el.tagName !== "IMG" && el.tagName !== "SCRIPT"), "no element from the value");
      assert.equal(p.document.title, value + ": buy crypto");
    });
  }

  test("an issue's value is text too", async () => {
    const p = open(Q("&tokens=btc&receiveAddressBtc=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&amount=50"));
    await settle();
    assert.match(text(p.main()), /\(given: <img src=x onerror=alert\(1\)>\)/);
    assert.ok(p.document.documentElement.all().every((el) => el.tagName !== "IMG"));
  });

  test("darkTheme=true sets the dark theme; otherwise light", async () => {
    const dark = open(Q("&darkTheme=true"));
    assert.equal(dark.document.documentElement.getAttribute("data-theme"), "dark");
    const light = open(Q("&darkTheme=false"));
    assert.equal(light.document.documentElement.getAttribute("data-theme"), null);
  });

  test("the built page never parses HTML", () => {
    assert.doesNotMatch(SOURCE, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
  });
});

describe("checkout: sign-in", () => {
  test("happy path: the session opens on reaching sign-in, the sandbox banner shows the code, then the review with Buy now", async () => {
    const p = shop(Q());
    p.hello(SHOP);
    await settle();
    click(button(p.main(), "Start"));
    click(button(p.main(), "Continue"));
    click(button(p.main(), "Continue"));
    await settle();
    type(p.document.getElementById("address"), BTC);
    assert.equal(p.session.opened.length, 0, "no session before it is needed");
    click(button(p.main(), "Continue"));
    await settle();
    assert.equal(p.h1(), "Sign in");
    assert.equal(p.document.activeElement, byTag(p.main(), "h1")[0]);
    assert.deepEqual(p.session.opened, [{ publicKey: PK, origin: SHOP }], "opened for the key and the hello's origin");
    const email = p.document.getElementById("email");
    assert.deepEqual(["type", "autocomplete", "name"].map((a) => email.getAttribute(a)), ["email", "email", "email"]);
    assert.equal(text(byTag(p.main(), "label").find((l) => l.getAttribute("for") === "email")), "Email");
    assert.ok(button(p.main(), "Back"), "back to the address");
    type(email, "buyer@example.com");
    click(button(p.main(), "Send code"));
    await settle();
    const sent = p.session.calls.find((c) => c.key === "POST /email");
    assert.deepEqual(sent.body, { email: "buyer@example.com" });
    assert.equal(sent.headers.Authorization, "Bearer " + TOKEN_PREFIX + "0");
    assert.equal(sent.headers["Content-Type"], "application/json");
    const banner = byTag(p.document.app, "header")[0];
    assert.match(text(banner), /Sandbox sign-in code: 123456$/);
    assert.ok(!text(p.main()).includes(SIGN_IN_CODE), "the code is shown only in the banner");
    assert.match(text(p.main()), /We sent a 6-digit code to buyer@example\.com\./);
    const code = p.document.getElementById("signin-code");
    assert.deepEqual(["inputmode", "autocomplete"].map((a) => code.getAttribute(a)), ["numeric", "one-time-code"]);
    assert.equal(text(byTag(p.main(), "label").find((l) => l.getAttribute("for") === "signin-code")), "Sign-in code");
    assert.equal(p.document.activeElement, code, "focus moves to the code field");
    assert.ok(button(p.main(), "Send a new code") && button(p.main(), "Use another email"));
    type(code, SIGN_IN_CODE);
    click(button(p.main(), "Sign in"));
    await settle();
    assert.deepEqual(p.session.calls.find((c) => c.key === "POST /signin").body, { email: "buyer@example.com", code: SIGN_IN_CODE });
    assert.equal(p.h1(), "Your purchase");
    assert.ok(button(p.main(), "Buy now").getAttribute("class").includes("primary"));
    assert.equal(button(p.main(), "Copy link").getAttribute("class"), "secondary");
    assert.doesNotMatch(text(byTag(p.document.app, "header")[0]), /sign-in code/, "the banner's code goes with the sign-in screen");
    const [open, ...calls] = p.session.calls;
    assert.equal(open.key, "POST /");
    assert.equal(open.headers.Authorization, undefined, "opening needs no token");
    for (const call of calls) assert.equal(call.headers.Authorization, "Bearer " + TOKEN_PREFIX + "0", call.key);
    assert.deepEqual(p.messages().filter((m) => m.type === "screen").map((m) => m.payload.name), ["home", "coin", "amount", "address", "signin", "review"]);
  });

  test("one-screen checkout: sign-in first, then the review read-only", async () => {
    const p = shop(ONE_SCREEN);
    await settle();
    assert.equal(p.h1(), "Sign in");
    assert.deepEqual(p.session.opened, [{ publicKey: PK, origin: null }], "not embedded by the loader: origin null");
    assert.equal(byTag(p.main(), "button").filter((b) => text(b) === "Back").length, 0);
    await signIn(p);
    assert.equal(p.h1(), "Your purchase");
    assert.equal(byTag(p.main(), "button").filter((b) => text(b) === "Change" || text(b) === "Back").length, 0);
    assert.ok(button(p.main(), "Buy now"));
  });

  test("errors at their field: bad email, wrong code, expired code; Use another email keeps the email", async () => {
    const session = sessionServer({
      answers: {
        "POST /signin": (request) =>
          request.body.code === "000000" ? answer(401, { message: "The sign-in code has expired or was tried too often, ask for a new one", code: 401 }) : null,
      },
    });
    const p = shop(ONE_SCREEN, { session });
    await settle();
    type(p.document.getElementById("email"), "not-an-email");
    click(button(p.main(), "Send code"));
    await settle();
    let field = p.document.getElementById("email");
    assert.equal(field.getAttribute("aria-invalid"), "true");
    assert.equal(text(p.document.getElementById(field.getAttribute("aria-describedby"))), "email must be an email address such as name@example.com");
    assert.equal(p.document.activeElement, field);
    assert.equal(field.value, "not-an-email", "the typed email is kept");

    type(field, "buyer@example.com");
    click(button(p.main(), "Send code"));
    await settle();
    type(p.document.getElementById("signin-code"), "999999");
    click(button(p.main(), "Sign in"));
    await settle();
    field = p.document.getElementById("signin-code");
    assert.equal(text(p.document.getElementById(field.getAttribute("aria-describedby"))), "The sign-in code is wrong");
    assert.equal(p.document.activeElement, field);
    assert.equal(p.h1(), "Sign in");

    type(field, "000000");
    click(button(p.main(), "Sign in"));
    await settle();
    field = p.document.getElementById("signin-code");
    assert.equal(text(p.document.getElementById(field.getAttribute("aria-describedby"))), "The sign-in code has expired or was tried too often, ask for a new one");
    click(button(p.main(), "Send a new code"));
    await settle();
    assert.equal(p.session.calls.filter((c) => c.key === "POST /email").length, 3);
    assert.equal(p.document.getElementById("signin-code").getAttribute("aria-invalid"), null, "a new code clears the error");

    click(button(p.main(), "Use another email"));
    assert.equal(p.document.getElementById("email").value, "buyer@example.com");
    assert.equal(p.document.getElementById("signin-code"), null);
    assert.doesNotMatch(text(byTag(p.document.app, "header")[0]), /sign-in code/);
  });

  test("429 for the email and 503 (no email sign-in) are shown", async () => {
    let status = 429;
    const session = sessionServer({
      answers: {
        "POST /email": () =>
          status === 429
            ? answer(429, { message: "Too many sign-in codes for this email, try again in 120 seconds", code: 429 }, { "Retry-After": "120" })
            : answer(503, { message: "Email sign-in is unavailable on this server", code: 503 }),
      },
    });
    const p = shop(ONE_SCREEN, { session });
    await settle();
    type(p.document.getElementById("email"), "buyer@example.com");
    click(button(p.main(), "Send code"));
    await settle();
    const field = p.document.getElementById("email");
    assert.equal(text(p.document.getElementById(field.getAttribute("aria-describedby"))), "Too many sign-in codes for this email, try again in 120 seconds");
    status = 503;
    click(button(p.main(), "Send code"));
    await settle();
    assert.equal(text(role(p.main(), "alert")[0]), "Email sign-in is unavailable on this server");
  });

  test("session expired: a new session, sign in again with a notice, the selection kept", async () => {
    const p = shop(Q());
    await settle();
    click(button(p.main(), "Start"));
    const eth = byTag(p.main(), "input").find((r) => r.value === "eth");
    eth.checked = true;
    eth.dispatch("change");
    click(button(p.main(), "Continue"));
    type(p.document.getElementById("amount"), "42");
    const currency = p.document.getElementById("currency");
    currency.value = "gbp";
    currency.dispatch("change");
    click(button(p.main(), "Continue"));
    await settle();
    type(p.document.getElementById("address"), "0x52908400098527886E0F7030069857D2E4169EE7");
    click(button(p.main(), "Continue"));
    await settle();
    await signIn(p);
    assert.equal(p.h1(), "Your purchase");
    p.session.expire();
    click(button(p.main(), "Buy now"));
    await settle();
    assert.equal(p.h1(), "Sign in");
    assert.equal(text(role(p.main(), "alert")[0]), "Your session expired. Sign in again.");
    assert.equal(p.session.opened.length, 2, "a new session");
    await signIn(p);
    assert.equal(p.h1(), "Your purchase");
    assert.match(text(p.main()), /CoinEthereum \(ETH\)ChangeAmount42 GBPChangeReceive address0x52908400098527886E0F7030069857D2E4169EE7Change/);
    assert.equal(role(p.main(), "alert").length, 0, "the notice is gone");
    click(button(p.main(), "Buy now"));
    await settle();
    assert.deepEqual(p.session.calls.filter((c) => c.key === "POST /orders").at(-1).body, { coin: "eth", amount: "42", currency: "gbp", address: "0x52908400098527886E0F7030069857D2E4169EE7" });
    assert.equal(p.session.calls.filter((c) => c.key === "POST /orders").at(-1).headers.Authorization, "Bearer " + TOKEN_PREFIX + "1");
    assert.equal(p.h1(), "Purchase complete");
  });
});

describe("checkout: the 2FA step", () => {
  test("verify: wrong code, empty code, 429 (wait, submit aria-disabled, no Buy), then the right code", async () => {
    let throttle = false;
    const session = sessionServer({
      twoFactor: "verify",
      answers: {
        "POST /2fa/verify": () => (throttle ? answer(429, { message: "Too many failed 2FA attempts, try again in 30 seconds", code: 429 }, { "Retry-After": "30" }) : null),
      },
    });
    const p = shop(ONE_SCREEN, { session });
    p.hello(SHOP);
    await settle();
    await signIn(p);
    assert.equal(p.h1(), "Two-factor authentication");
    assert.equal(p.document.activeElement, byTag(p.main(), "h1")[0]);
    const field = () => p.document.getElementById("twofactor-code");
    assert.deepEqual(["inputmode", "autocomplete"].map((a) => field().getAttribute(a)), ["numeric", "one-time-code"]);
    assert.equal(text(byTag(p.main(), "label").find((l) => l.getAttribute("for") === "twofactor-code")), "Authenticator code");
    const error = () => text(p.document.getElementById(field().getAttribute("aria-describedby")));

    click(button(p.main(), "Verify"));
    await settle();
    assert.equal(error(), "Enter the 6-digit code from your authenticator app");
    assert.equal(p.session.calls.filter((c) => c.key === "POST /2fa/verify").length, 0, "checked locally");

    type(field(), "111111");
    click(button(p.main(), "Verify"));
    await settle();
    assert.deepEqual(p.session.calls.find((c) => c.key === "POST /2fa/verify").body, { token: "111111" });
    assert.equal(error(), "Google 2FA failed");
    assert.equal(p.document.activeElement, field());

    throttle = true;
    click(button(p.main(), "Verify"));
    await settle();
    assert.deepEqual(byTag(p.document.getElementById(field().getAttribute("aria-describedby")), "li").map(text), [
      "Too many failed 2FA attempts, try again in 30 seconds",
      "Wait 30 seconds, then try again.",
    ]);
    assert.equal(button(p.main(), "Verify").getAttribute("aria-disabled"), "true");
    const before = p.session.calls.length;
    click(button(p.main(), "Verify"));
    await settle();
    assert.equal(p.session.calls.length, before, "no attempt while waiting");
    assert.equal(byTag(p.document.app, "button").filter((b) => text(b) === "Buy now").length, 0, "no Buy while the 2FA step is open");
    assert.deepEqual(p.timers.run(), [30000]);
    assert.equal(button(p.main(), "Verify").getAttribute("aria-disabled"), null, "the wait is over");
    throttle = false;
    type(field(), TOTP);
    click(button(p.main(), "Verify"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    assert.ok(button(p.main(), "Buy now"));
    assert.ok(!JSON.stringify(p.parent.posted).includes(TOTP) && !JSON.stringify(p.parent.posted).includes("111111"), "no code in a message");
    assert.deepEqual(p.messages().filter((m) => m.type === "screen").map((m) => m.payload.name), ["home", "signin", "twofactor", "review"]);
  });

  test("423: locked, no submit at all, contact the site's support", async () => {
    const session = sessionServer({
      twoFactor: "verify",
      answers: { "POST /2fa/verify": () => answer(423, { message: "2FA is locked after too many failed attempts", code: 423 }) },
    });
    const p = shop(ONE_SCREEN + "&clientName=Acme%20Shop", { session });
    await settle();
    await signIn(p);
    type(p.document.getElementById("twofactor-code"), "123123");
    click(button(p.main(), "Verify"));
    await settle();
    assert.equal(p.h1(), "Two-factor authentication");
    assert.equal(text(role(p.main(), "alert")[0]), "2FA is locked after too many failed attempts");
    assert.match(text(p.main()), /Contact the support of Acme Shop to unlock it\./);
    // No submit; a recovery code still works while locked (SPEC 8.1), and Back leads to the review.
    assert.deepEqual(byTag(p.main(), "button").map((b) => [text(b), b.getAttribute("type")]), [
      ["Lost your authenticator? Use a recovery code", "button"],
      ["Back", "button"],
    ]);
    assert.equal(p.document.getElementById("twofactor-code"), null);
  });

  test("setup: QR and manual key, Copy key copies the exact key, Turn on 2FA, then the review; nothing of it kept after", async () => {
    const copied = [];
    const session = sessionServer({ twoFactor: "setup", kycPassed: true });
    const p = shop(ONE_SCREEN, { session, clipboard: { writeText: async (t) => copied.push(t) } });
    p.hello(SHOP);
    await settle();
    await signIn(p);
    assert.equal(p.h1(), "Set up two-factor authentication");
    assert.match(text(p.main()), /^Set up two-factor authentication2FA is required before you can buy\.Scan it with an authenticator app, or enter this key:/);
    assert.equal(p.document.activeElement, byTag(p.main(), "h1")[0], "focus stays on the heading when the QR code arrives");
    const img = byTag(p.main(), "img")[0];
    assert.equal(img.getAttribute("src"), QR);
    assert.equal(img.getAttribute("alt"), "QR code for your authenticator app");
    assert.equal(img.getAttribute("class"), "qr");
    const key = p.document.getElementById("setup-key");
    assert.equal(key.tagName, "CODE");
    assert.equal(text(key), "JBSW Y3DP EHPK 3PXP JBSW Y3DP EHPK 3PXP");
    click(button(p.main(), "Copy key"));
    await settle();
    assert.deepEqual(copied, [MANUAL]);
    assert.deepEqual(p.session.calls.find((c) => c.key === "POST /2fa/create").body, {});
    const field = () => p.document.getElementById("setup-code");
    assert.equal(text(byTag(p.main(), "label").find((l) => l.getAttribute("for") === "setup-code")), "Authenticator code");
    type(field(), "222222");
    click(button(p.main(), "Turn on 2FA"));
    await settle();
    assert.equal(text(p.document.getElementById(field().getAttribute("aria-describedby"))), "Google 2FA failed");
    assert.equal(byTag(p.main(), "img")[0].getAttribute("src"), QR, "the QR code stays for another try");
    type(field(), TOTP);
    click(button(p.main(), "Turn on 2FA"));
    await settle();
    assert.deepEqual(p.session.calls.find((c) => c.key === "POST /2fa/enable" && c.body.token === TOTP).body, { token: TOTP });
    // The recovery codes (next test), then the review.
    assert.equal(p.h1(), "Save your recovery codes");
    assert.equal(byTag(p.document.app, "img").length, 0);
    const box = p.document.getElementById("codes-saved");
    box.checked = true;
    box.dispatch("change");
    click(button(p.main(), "Continue"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    assert.ok(button(p.main(), "Buy now"));
    const all = everything(p.document) + JSON.stringify(p.parent.posted);
    assert.ok(!all.includes(MANUAL) && !all.includes("JBSW Y3DP") && !all.includes(QR), "QR and key are gone");
    assert.deepEqual(p.messages().filter((m) => m.type === "screen").map((m) => m.payload.name), ["home", "signin", "setup", "review"], "the codes are part of the setup step");
  });

  test("recovery codes after enable: shown once (monospace list), Copy, Download (.txt, the codes only), confirmed before Continue; gone after", async () => {
    const copied = [];
    const session = sessionServer({ twoFactor: "setup", kycPassed: true });
    const p = shop(ONE_SCREEN, { session, files: true, clipboard: { writeText: async (t) => copied.push(t) } });
    p.hello(SHOP);
    await settle();
    await signIn(p);
    type(p.document.getElementById("setup-code"), TOTP);
    click(button(p.main(), "Turn on 2FA"));
    await settle();
    assert.equal(p.h1(), "Save your recovery codes");
    assert.equal(p.document.activeElement, byTag(p.main(), "h1")[0], "focus on the new screen's heading");
    const list = p.document.getElementById("recovery-codes");
    assert.equal(list.tagName, "OL");
    assert.equal(list.getAttribute("aria-label"), "Recovery codes");
    assert.deepEqual(byTag(list, "code").map(text), CODES, "each code as given, in a code element");
    assert.equal(byTag(p.main(), "button").filter((b) => text(b) === "Back").length, 0, "no way back to a setup that is done");

    // Continue waits for the confirmation: refused, said at the box, focus on it; nothing asked.
    const box = () => p.document.getElementById("codes-saved");
    const cont = () => button(p.main(), "Continue");
    assert.equal(box().getAttribute("type"), "checkbox");
    assert.equal(text(byTag(p.main(), "label").find((l) => l.getAttribute("for") === "codes-saved")), "I saved my recovery codes");
    assert.equal(cont().getAttribute("aria-disabled"), "true");
    const calls = p.session.calls.length;
    click(cont());
    await settle();
    assert.equal(p.h1(), "Save your recovery codes");
    assert.equal(p.document.activeElement, box());
    assert.equal(box().getAttribute("aria-invalid"), "true");
    assert.equal(text(p.document.getElementById(box().getAttribute("aria-describedby"))), "Save your recovery codes, then tick the box to continue.");
    assert.equal(p.session.calls.length, calls);

    click(button(p.main(), "Copy codes"));
    await settle();
    assert.deepEqual(copied, [CODES.join("\n")]);
    assert.match(text(role(p.document.app, "status").at(-1)), /^Recovery codes copied\.$/);
    click(button(p.main(), "Download (.txt)"));
    assert.equal(p.document.downloads.length, 1);
    const [file] = p.document.downloads;
    assert.equal(file.name, "rampart-recovery-codes.txt");
    assert.equal(file.attached, true, "clicked while in the document");
    assert.match(file.href, /^blob:https:\/\/widget\.example\.com\/[0-9]+$/, "the link names no code");
    assert.deepEqual(p.blobs.get(file.href), { text: CODES.join("\n") + "\n", type: "text/plain;charset=utf-8" });
    assert.equal(everything(p.document).includes("blob:"), false, "the link is gone");
    p.timers.run();
    assert.deepEqual(p.revoked, [file.href], "the blob is let go");

    box().checked = true;
    box().dispatch("change");
    assert.equal(cont().getAttribute("aria-disabled"), null, "Continue is on once ticked");
    assert.equal(cont().getAttribute("class"), "primary");
    click(cont());
    await settle();
    assert.equal(p.h1(), "Your purchase");
    const all = everything(p.document) + JSON.stringify(p.parent.posted) + p.window.location.href + JSON.stringify(p.requests.map((r) => [r.url, r.body]));
    for (const code of CODES) assert.ok(!all.includes(code) && !all.includes(code.replace(/-/g, "")), "the codes left with their screen: " + code);
    assert.equal(list.childNodes.every((li) => li.textContent === ""), true, "and their list was emptied");
  });

  test("an older server's enable without recovery codes goes straight to the review", async () => {
    const session = sessionServer({
      twoFactor: "setup",
      kycPassed: true,
      answers: { "POST /2fa/enable": (request, fake) => (request.body.token === TOTP ? answer(200, { message: "Successfully enabled 2fa!", code: 200, session: (fake.state = { ...fake.state, twoFactor: "passed", mayPurchase: true }) }) : null) },
    });
    const p = shop(ONE_SCREEN, { session });
    await settle();
    await signIn(p);
    type(p.document.getElementById("setup-code"), TOTP);
    click(button(p.main(), "Turn on 2FA"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    assert.ok(button(p.main(), "Buy now"));
  });

  test("lost authenticator: a recovery code (empty, wrong, throttled, then valid) turns 2FA off; setup with the note and the hold; Back to the review", async () => {
    let throttle = false;
    const session = sessionServer({
      twoFactor: "verify",
      kycPassed: true,
      answers: {
        "POST /2fa/verify": (request) =>
          throttle && request.body.recoveryCode !== undefined ? answer(429, { message: "Too many failed recovery codes, try again in 30 seconds", code: 429 }, { "Retry-After": "30" }) : null,
      },
    });
    const p = shop(ONE_SCREEN, { session });
    p.hello(SHOP);
    await settle();
    await signIn(p);
    assert.equal(p.h1(), "Two-factor authentication");
    click(button(p.main(), "Lost your authenticator? Use a recovery code"));
    await settle();
    assert.equal(p.h1(), "Use a recovery code");
    assert.equal(p.document.activeElement, byTag(p.main(), "h1")[0]);
    assert.match(text(p.main()), /It turns 2FA off\./);
    const field = () => p.document.getElementById("recovery-code");
    assert.equal(text(byTag(p.main(), "label").find((l) => l.getAttribute("for") === "recovery-code")), "Recovery code");
    assert.deepEqual(["autocomplete", "spellcheck", "autocapitalize"].map((a) => field().getAttribute(a)), ["off", "false", "characters"]);
    const error = () => byTag(p.document.getElementById(field().getAttribute("aria-describedby")), "li").map(text);

    // Back leads to the authenticator code, and there again.
    click(button(p.main(), "Back"));
    await settle();
    assert.equal(p.h1(), "Two-factor authentication");
    click(button(p.main(), "Lost your authenticator? Use a recovery code"));
    await settle();

    click(button(p.main(), "Use recovery code"));
    await settle();
    assert.deepEqual(error(), ["Enter one of your recovery codes"]);
    assert.equal(p.session.calls.filter((c) => c.key === "POST /2fa/verify").length, 0, "checked locally");
    type(field(), "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF");
    click(button(p.main(), "Use recovery code"));
    await settle();
    assert.deepEqual(p.session.calls.find((c) => c.key === "POST /2fa/verify").body, { recoveryCode: "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF" }, "the code alone, no token");
    assert.deepEqual(error(), ["This recovery code does not work. Check it, or use another one: each code works once."]);
    assert.equal(p.document.activeElement, field());
    throttle = true;
    click(button(p.main(), "Use recovery code"));
    await settle();
    assert.deepEqual(error(), ["Too many failed recovery codes, try again in 30 seconds", "Wait 30 seconds, then try again."]);
    assert.equal(button(p.main(), "Use recovery code").getAttribute("aria-disabled"), "true");
    assert.deepEqual(p.timers.run(), [30000]);
    throttle = false;
    type(field(), " " + RECOVERY.toLowerCase() + " ");
    click(button(p.main(), "Use recovery code"));
    await settle();
    assert.deepEqual(p.session.calls.filter((c) => c.key === "POST /2fa/verify").at(-1).body, { recoveryCode: RECOVERY.toLowerCase() }, "trimmed; the server normalises the rest");

    // KYC passed: 2FA is required, so the setup, saying what happened and until when purchases wait.
    assert.equal(p.h1(), "Set up 2FA again");
    assert.equal(p.document.activeElement, byTag(p.main(), "h1")[0]);
    const time = byTag(p.main(), "time")[0];
    assert.equal(time.getAttribute("datetime"), "2026-11-27T18:00:00.000Z");
    const local = new Date(HOLD).toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "numeric", minute: "2-digit", timeZoneName: "short" });
    assert.equal(text(time), local, "in the person's locale and time zone");
    const utc = /UTC$/.test(local) ? "" : " (2026-11-27 18:00 UTC)";
    assert.equal(text(p.document.getElementById("hold-notice")), "You used a recovery code: 2FA is off. Purchases are on hold until " + local + utc + ".");

    // Back: the review, with the hold, no Buy, and the way to the setup again.
    click(button(p.main(), "Back"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    assert.ok(p.document.getElementById("hold-notice"));
    assert.equal(byTag(p.document.app, "button").filter((b) => text(b) === "Buy now").length, 0);
    assert.match(text(p.main()), /2FA is required before you can buy\./);
    click(button(p.main(), "Set up 2FA"));
    await settle();
    assert.equal(p.h1(), "Set up 2FA again");
    const screens = p.messages().filter((m) => m.type === "screen").map((m) => m.payload.name);
    assert.deepEqual(screens, ["home", "signin", "twofactor", "setup", "review", "setup"], "the recovery code is part of the 2FA step");
    assert.ok(!JSON.stringify(p.parent.posted).includes(RECOVERY) && !JSON.stringify(p.parent.posted).toLowerCase().includes(RECOVERY.toLowerCase()), "no code in a message");
  });

  test("the two factors wait apart: a throttled authenticator code leaves the recovery code free, and its wait still ends", async () => {
    const session = sessionServer({
      twoFactor: "verify",
      answers: { "POST /2fa/verify": (request) => (request.body.token ? answer(429, { message: "Too many failed 2FA attempts, try again in 30 seconds", code: 429 }, { "Retry-After": "30" }) : null) },
    });
    const p = shop(ONE_SCREEN, { session });
    await settle();
    await signIn(p);
    type(p.document.getElementById("twofactor-code"), "111111");
    click(button(p.main(), "Verify"));
    await settle();
    assert.equal(button(p.main(), "Verify").getAttribute("aria-disabled"), "true");
    click(button(p.main(), "Lost your authenticator? Use a recovery code"));
    await settle();
    assert.equal(button(p.main(), "Use recovery code").getAttribute("aria-disabled"), null, "the recovery code does not wait");
    type(p.document.getElementById("recovery-code"), "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF");
    click(button(p.main(), "Use recovery code"));
    await settle();
    assert.equal(p.session.calls.filter((c) => c.key === "POST /2fa/verify" && c.body.recoveryCode).length, 1);
    click(button(p.main(), "Back"));
    await settle();
    assert.equal(button(p.main(), "Verify").getAttribute("aria-disabled"), "true", "the authenticator code still waits");
    assert.deepEqual(p.timers.run(), [30000]);
    assert.equal(button(p.main(), "Verify").getAttribute("aria-disabled"), null, "and its wait ends");
  });

  test("the hold on the review: when (local and UTC) and why, Buy refused; an order refused for a hold this page did not know of", async () => {
    let stale = true;
    const session = sessionServer({
      twoFactor: "verify",
      answers: {
        // The first answer after the recovery forgets the hold (a server whose state lags): the
        // order's 403 is then what tells the page.
        "POST /2fa/verify": (request, fake) => {
          if (request.body.recoveryCode !== RECOVERY || !stale) return null;
          fake.state = { ...fake.state, twoFactor: "none", mayPurchase: true, purchaseHoldUntil: null, recoveryCodesRemaining: 0, held: true };
          return answer(200, { message: "Successfully disbaled 2fa!", code: 200, session: fake.state });
        },
        "GET /": (request, fake) => (fake.state.held ? answer(200, { message: "Widget session.", code: 200, session: { ...fake.state, mayPurchase: false, purchaseHoldUntil: HOLD } }) : null),
        "POST /orders": (request, fake) => (fake.state.held ? answer(403, { message: HOLD_MESSAGE, code: 403 }) : null),
      },
    });
    const p = shop(ONE_SCREEN, { session });
    await settle();
    await signIn(p);
    click(button(p.main(), "Lost your authenticator? Use a recovery code"));
    await settle();
    type(p.document.getElementById("recovery-code"), RECOVERY);
    click(button(p.main(), "Use recovery code"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    click(button(p.main(), "Buy now"));
    await settle();
    assert.equal(p.session.calls.filter((c) => c.key === "POST /orders").length, 1);
    assert.equal(p.h1(), "Your purchase");
    assert.equal(text(role(p.main(), "alert")[0]), HOLD_MESSAGE, "the server's words");
    const notice = p.document.getElementById("hold-notice");
    assert.match(text(notice), /^Purchases are on hold until .+\.You turned 2FA off with a recovery code\. The wait protects you if someone else has your codes\.$/);
    assert.equal(byTag(notice, "time")[0].getAttribute("datetime"), "2026-11-27T18:00:00.000Z");
    const buy = button(p.main(), "Buy now");
    assert.deepEqual(["aria-disabled", "aria-describedby", "class"].map((a) => buy.getAttribute(a)), ["true", "hold-notice", "primary off"]);
    click(buy);
    await settle();
    assert.equal(p.session.calls.filter((c) => c.key === "POST /orders").length, 1, "a refused Buy asks nothing");
  });

  test("a hold this page did not cause (an operator's reset): said as such; the review looks again on arrival and Buy comes back when it ends", async () => {
    let held = true;
    const session = sessionServer({
      answers: {
        "POST /signin": (request, fake) => {
          if (request.body.code !== SIGN_IN_CODE) return null;
          fake.state = { ...fake.state, signedIn: true, email: request.body.email, twoFactor: "none", mayPurchase: false, purchaseHoldUntil: HOLD };
          return answer(200, { message: "Signed in.", code: 200, session: fake.state });
        },
        "GET /": (request, fake) => (held ? null : answer(200, { message: "Widget session.", code: 200, session: (fake.state = { ...fake.state, mayPurchase: true, purchaseHoldUntil: null }) })),
      },
    });
    const p = shop(Q("&tokens=btc&receiveAddressBtc=" + BTC), { session });
    await settle();
    type(p.document.getElementById("amount"), "20");
    click(button(p.main(), "Continue"));
    await settle();
    await signIn(p);
    assert.equal(p.h1(), "Your purchase");
    assert.match(text(p.document.getElementById("hold-notice")), /2FA was reset recently \(with a recovery code or by support\)\./);
    assert.equal(button(p.main(), "Buy now").getAttribute("aria-disabled"), "true");
    const looks = () => p.session.calls.filter((c) => c.key === "GET /").length;
    assert.equal(looks(), 1, "arriving at the review with a hold, it asks once");
    held = false;
    click(byTag(p.main(), "button").find((b) => b.getAttribute("aria-label") === "Change the amount"));
    await settle();
    click(button(p.main(), "Continue"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    assert.equal(looks(), 2);
    assert.equal(p.document.getElementById("hold-notice"), null);
    assert.equal(button(p.main(), "Buy now").getAttribute("aria-disabled"), null);
    assert.equal(text(role(p.document.app, "status").at(-1)), "Purchases have resumed.");
  });

  test("few recovery codes left after a verify: said on the review, new codes for an authenticator code, shown once, then the review without the notice", async () => {
    const session = sessionServer({ twoFactor: "verify", kycPassed: true, codesLeft: 2 });
    const p = shop(ONE_SCREEN, { session, files: true });
    p.hello(SHOP);
    await settle();
    await signIn(p);
    type(p.document.getElementById("twofactor-code"), TOTP);
    click(button(p.main(), "Verify"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    assert.ok(button(p.main(), "Buy now"));
    const left = p.document.getElementById("codes-left");
    assert.equal(text(byTag(left, "p")[0]), "You have 2 recovery codes left.");
    click(button(left, "Get new recovery codes"));
    await settle();
    assert.equal(p.h1(), "Get new recovery codes");
    assert.equal(p.document.activeElement, byTag(p.main(), "h1")[0]);
    // Back to the review, and there again.
    click(button(p.main(), "Back"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    click(button(p.main(), "Get new recovery codes"));
    await settle();
    const field = () => p.document.getElementById("newcodes-code");
    assert.equal(text(byTag(p.main(), "label").find((l) => l.getAttribute("for") === "newcodes-code")), "Authenticator code");
    type(field(), "111111");
    click(button(p.main(), "Get new codes"));
    await settle();
    assert.equal(text(p.document.getElementById(field().getAttribute("aria-describedby"))), "Google 2FA failed");
    type(field(), TOTP);
    click(button(p.main(), "Get new codes"));
    await settle();
    assert.deepEqual(p.session.calls.filter((c) => c.key === "POST /2fa/recoveryCodes").map((c) => c.body), [{ token: "111111" }, { token: TOTP }]);
    assert.equal(p.h1(), "Save your recovery codes");
    assert.deepEqual(byTag(p.document.getElementById("recovery-codes"), "code").map(text), NEW_CODES);
    click(button(p.main(), "Download (.txt)"));
    assert.equal(p.blobs.get(p.document.downloads[0].href).text, NEW_CODES.join("\n") + "\n");
    const box = p.document.getElementById("codes-saved");
    box.checked = true;
    box.dispatch("change");
    click(button(p.main(), "Continue"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    assert.equal(p.document.getElementById("codes-left"), null, "ten codes now");
    const screens = p.messages().filter((m) => m.type === "screen").map((m) => m.payload.name);
    assert.deepEqual(screens, ["home", "signin", "twofactor", "review", "twofactor", "review", "twofactor", "review"]);
    const all = everything(p.document) + JSON.stringify(p.parent.posted);
    for (const code of NEW_CODES) assert.ok(!all.includes(code), code);
  });

  test("one recovery code left, and none: said so", async () => {
    for (const [left, said] of [[1, "You have 1 recovery code left."], [0, "You have no recovery codes left."], [3, "You have 3 recovery codes left."]]) {
      const p = shop(ONE_SCREEN, { session: sessionServer({ twoFactor: "verify", codesLeft: left }) });
      await settle();
      await signIn(p);
      type(p.document.getElementById("twofactor-code"), TOTP);
      click(button(p.main(), "Verify"));
      await settle();
      assert.equal(text(byTag(p.document.getElementById("codes-left"), "p")[0]), said);
    }
    const p = shop(ONE_SCREEN, { session: sessionServer({ twoFactor: "verify", codesLeft: 4 }) });
    await settle();
    await signIn(p);
    type(p.document.getElementById("twofactor-code"), TOTP);
    click(button(p.main(), "Verify"));
    await settle();
    assert.equal(p.document.getElementById("codes-left"), null, "4 left: nothing said");
  });

  test("sandbox KYC control on the review; after it, 2FA setup before Buy", async () => {
    const p = shop(ONE_SCREEN);
    await settle();
    await signIn(p);
    assert.equal(p.h1(), "Your purchase");
    assert.ok(button(p.main(), "Buy now"));
    click(button(p.main(), "Mark me as KYC passed (sandbox)"));
    await settle();
    assert.deepEqual(p.session.calls.find((c) => c.key === "POST /kyc").body, {});
    assert.equal(p.h1(), "Set up two-factor authentication");
    assert.equal(byTag(p.document.app, "button").filter((b) => text(b) === "Buy now").length, 0);
  });

  test("no KYC control in production or once KYC passed", async () => {
    const p = shop(ONE_SCREEN, { session: sessionServer({ kycPassed: true }) });
    await settle();
    await signIn(p);
    assert.equal(byTag(p.main(), "button").filter((b) => text(b).startsWith("Mark me")).length, 0);
  });
});

describe("checkout: order and confirmation", () => {
  test("Buy now: order.created then order.completed with the orderId, the confirmation with the partner's button", async () => {
    const p = shop(ONE_SCREEN, { cfg: { widgetText: "Back to Acme", widgetButtonURL: "https://shop.example.com/thanks?x=1" } });
    p.hello(SHOP);
    await settle();
    await signIn(p, "Buyer@Example.com");
    click(button(p.main(), "Buy now"));
    await settle();
    assert.deepEqual(p.session.calls.find((c) => c.key === "POST /orders").body, { coin: "btc", amount: "50", currency: "usd", address: BTC });
    assert.equal(p.h1(), "Purchase complete");
    assert.equal(p.document.activeElement, byTag(p.main(), "h1")[0]);
    const id = p.document.getElementById("order-id");
    assert.equal(id.tagName, "CODE");
    assert.equal(text(id), "0b7c3a6e-5f0d-4c8e-9d7a-2f4b6c8d0e1f");
    assert.deepEqual(byTag(p.main(), "dt").map(text), ["Order ID", "Coin", "Amount", "Quantity", "Price", "Receive address"]);
    assert.deepEqual(byTag(p.main(), "dd").map(text), ["0b7c3a6e-5f0d-4c8e-9d7a-2f4b6c8d0e1f", "Bitcoin (BTC)", "50 USD", "0.00038461 BTC", "1 BTC = 65000.00 USD", BTC]);
    const link = byTag(p.main(), "a")[0];
    assert.equal(text(link), "Back to Acme");
    assert.deepEqual(["href", "target", "rel", "class"].map((a) => link.getAttribute(a)), ["https://shop.example.com/thanks?x=1", "_top", "noopener", "button primary"]);
    const events = p.messages().filter((m) => m.type !== "resize");
    const orders = events.filter((m) => m.type.startsWith("order."));
    assert.deepEqual(orders.map((m) => [m.type, m.payload]), [
      ["order.created", { orderId: "0b7c3a6e-5f0d-4c8e-9d7a-2f4b6c8d0e1f" }],
      ["order.completed", { orderId: "0b7c3a6e-5f0d-4c8e-9d7a-2f4b6c8d0e1f", status: "completed" }],
    ]);
    assert.deepEqual(events.slice(-3).map((m) => m.type), ["order.created", "order.completed", "screen"]);
    assert.equal(events.at(-1).payload.name, "confirmation");
    const seqs = p.messages().map((m) => m.seq);
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1), "seq from 1, one by one");
    assert.ok(p.parent.posted.every((m) => m.targetOrigin === SHOP));
    // (The address is in ready's canonical URL, which the partner built; nowhere else.)
    const posted = JSON.stringify(p.parent.posted.filter((m) => m.data.type !== "ready").map((m) => m.data.payload)).toLowerCase();
    for (const secret of [TOKEN_PREFIX.toLowerCase(), "buyer@example.com", SIGN_IN_CODE, BTC.toLowerCase()]) assert.ok(!posted.includes(secret), secret);
  });

  test("without widgetText and widgetButtonURL (or with only one): no button", async () => {
    for (const cfg of [{}, { widgetText: "Back to Acme" }, { widgetButtonURL: "https://shop.example.com/" }]) {
      const p = shop(ONE_SCREEN, { cfg });
      await settle();
      await signIn(p);
      click(button(p.main(), "Buy now"));
      await settle();
      assert.equal(p.h1(), "Purchase complete");
      assert.equal(byTag(p.main(), "a").length, 0, JSON.stringify(cfg));
    }
  });

  test("the session token is never in a message, the location, an attribute or a text", async () => {
    const p = shop(ONE_SCREEN, { cfg: { widgetText: "Done", widgetButtonURL: "https://shop.example.com/" } });
    p.hello(SHOP);
    await settle();
    await signIn(p);
    click(button(p.main(), "Buy now"));
    await settle();
    assert.equal(p.h1(), "Purchase complete");
    assert.ok(p.session.tokens.length >= 1);
    const places = [JSON.stringify(p.parent.posted), p.window.location.href, p.window.location.search, everything(p.document), p.document.title, ...p.requests.map((r) => r.url + JSON.stringify(r.body || {}))];
    for (const place of places) assert.ok(!place.includes(TOKEN_PREFIX), place.slice(0, 200));
    // It travels only in the Authorization header of the session's calls.
    assert.ok(p.requests.filter((r) => r.url.startsWith(SESSION + "/")).every((r) => r.init.headers.Authorization === "Bearer " + p.session.tokens[0]));
    assert.ok(p.requests.filter((r) => !r.url.startsWith(SESSION + "/")).every((r) => !(r.init.headers || {}).Authorization));
  });

  test("order 400 naming the address: shown at the review's address row, focus on its Change", async () => {
    const session = sessionServer({
      answers: { "POST /orders": () => answer(400, { message: "receiveAddress.btc is not valid: The bech32 checksum does not match: the address is mistyped or corrupted.", code: 400 }) },
    });
    const p = shop(Q("&tokens=btc&amount=20"), { session });
    await settle();
    type(p.document.getElementById("address"), BTC);
    click(button(p.main(), "Continue"));
    await settle();
    await signIn(p);
    click(button(p.main(), "Buy now"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    const error = p.document.getElementById("order-error");
    assert.equal(error.getAttribute("role"), "alert");
    assert.equal(text(error), "receiveAddress.btc is not valid: The bech32 checksum does not match: the address is mistyped or corrupted.");
    assert.equal(error.parentNode.tagName, "DD");
    assert.match(text(error.parentNode), /^bc1q/);
    const change = byTag(p.main(), "button").find((b) => b.getAttribute("aria-label") === "Change the receive address");
    assert.equal(change.getAttribute("aria-describedby"), "order-error");
    assert.equal(p.document.activeElement, change);
    click(change);
    assert.equal(p.h1(), "Where should we send your Bitcoin?");
  });

  test("order 403 (2FA required): the fresh session state decides the step; 503 is shown", async () => {
    let mode = "403";
    const session = sessionServer({
      answers: {
        "POST /orders": (request, fake) => {
          if (mode === "403") {
            fake.state = { ...fake.state, twoFactor: "verify", mayPurchase: false };
            return answer(403, { message: "2FA is required before buying", code: 403 });
          }
          return answer(503, { message: "Purchases are unavailable on this server", code: 503 });
        },
      },
    });
    const p = shop(ONE_SCREEN, { session });
    await settle();
    await signIn(p);
    click(button(p.main(), "Buy now"));
    await settle();
    assert.ok(p.session.calls.some((c) => c.key === "GET /"));
    assert.equal(p.h1(), "Two-factor authentication");
    mode = "503";
    type(p.document.getElementById("twofactor-code"), TOTP);
    click(button(p.main(), "Verify"));
    await settle();
    click(button(p.main(), "Buy now"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    assert.equal(text(role(p.main(), "alert")[0]), "Purchases are unavailable on this server");
  });
});

describe("checkout: a server that takes no orders", () => {
  test("production, purchases false: the review says so, no Buy, no sign-in, no session", async () => {
    const session = sessionServer({ environment: "production" });
    const p = open(ONE_SCREEN.replace(PK, "pk_production_4eC39HqLyjWDarjtT1zdp7dc"), {
      cfg: config({ environment: "production", purchases: false, widgetOrigins: [SHOP] }),
      session,
    });
    p.hello(SHOP);
    await settle();
    assert.equal(p.h1(), "Your purchase");
    const status = role(p.main(), "status").find((el) => el.tagName === "P");
    assert.equal(text(status), "Purchases are unavailable on this server.");
    assert.equal(byTag(p.main(), "button").filter((b) => text(b) === "Buy now").length, 0);
    assert.equal(button(p.main(), "Copy link").getAttribute("class"), "primary", "the one action left is primary");
    assert.equal(session.calls.length + session.opened.length, 0, "no session at all");
    assert.deepEqual(p.messages().filter((m) => m.type === "screen").map((m) => m.payload.name), ["home", "review"]);
  });

  test("standard mode: the address leads to the review, never to sign-in", async () => {
    const session = sessionServer();
    const p = open(Q("&tokens=btc&amount=20"), { cfg: config({ purchases: false }), session });
    await settle();
    type(p.document.getElementById("address"), BTC);
    click(button(p.main(), "Continue"));
    await settle();
    assert.equal(p.h1(), "Your purchase");
    assert.match(text(p.main()), /Purchases are unavailable on this server\./);
    assert.equal(session.opened.length, 0);
  });
});
