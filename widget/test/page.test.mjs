// The built widget page (dist/page.js, or the fresh build under RAMPART_WIDGET_DIST) run in a
// hand-made fake browser (fake-page.mjs) against a fake server that answers like the example
// server's /v1/widget/config and /v1/widget/check: the screens of the three modes, the
// explanation screens, the messages to the loader, escaping, accessibility wiring.
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

function server({ cfg = config(), check = fakeCheck, configStatus } = {}) {
  return (request) => {
    if (request.url.startsWith("https://widget.example.com/v1/widget/config?")) {
      if (configStatus) return configStatus(request);
      return answer(200, cfg);
    }
    if (request.url === "https://widget.example.com/v1/widget/check?target=url" && request.method === "POST") return check(request.body, request);
    throw new Error("unexpected request " + request.url);
  };
}

function open(query, opts = {}) {
  const p = page({ source: SOURCE, url: ROOT + "?" + query, server: server(opts), parent: opts.parent, clipboard: opts.clipboard });
  const main = () => p.document.main;
  const h1 = () => text(byTag(main(), "h1")[0]);
  const messages = () => p.parent.posted.map((m) => m.data);
  return { ...p, main, h1, messages };
}

const Q = (extra = "") => "publicKey=" + PK + extra;

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
    assert.deepEqual(screens, ["home", "summary"], "home while the options are checked, then the one-screen summary");
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
    assert.deepEqual(p.parent.posted.filter((m) => m.data.type === "screen").map((m) => m.data.payload.name), ["home", "coin", "amount", "address", "summary"]);
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
