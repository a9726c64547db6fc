// The purchase flow (SPEC 6.3) in Chromium against the real rampart-server: the widget on a
// partner page of another origin, a person signing in with the sandbox banner's code, the 2FA
// step (setup with the QR code decoded by jsQR, verify, replay, throttle, the lock after 100
// failures on a server whose clock a test hook moves) with codes from
// otplib (an authenticator independent of the server), the recovery codes shown after setup,
// buying, the order read back with the
// partner's secret key, the confirmation's partner button navigating the top page, sign-in codes
// and sessions that expire (servers started with the hidden test hooks), production's
// "purchases are unavailable", and no secret in any URL, message, log or storage.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import jsQR from "jsqr";
import { PNG } from "pngjs";
import {
  BTC_ADDRESS,
  ETH_ADDRESS,
  SANDBOX_BANNER,
  TEST_TIMEOUT,
  WAIT,
  api,
  cleanup,
  cli,
  createPartner,
  events,
  heading,
  launchBrowser,
  openWidget,
  registerOrigins,
  requestSignInCode,
  sandboxSuite,
  saveRecoveryCodes,
  signIn,
  startPartnerSite,
  startServer,
  tempDir,
  totpCode,
  waitForEvents,
  wrongTotpCode,
} from "./harness.mjs";

const T = { timeout: TEST_TIMEOUT };

/** The server's exact messages (core/src/error.rs, core/src/lifecycle.rs). */
const CODE_WRONG = "The sign-in code is wrong";
const CODE_EXPIRED = "The sign-in code has expired or was tried too often, ask for a new one";
const TOTP_FAILED = "Google 2FA failed";
const LOCKED = "2FA is locked after too many failed attempts";
/** The page's own texts (widget/src/page/checkout.ts). */
const SESSION_EXPIRED_NOTICE = "Your session expired. Sign in again.";
const PURCHASES_UNAVAILABLE = "Purchases are unavailable on this server.";
const KYC_BUTTON = "Mark me as KYC passed (sandbox)";

/** The sandbox's simulated quote (docs/DESIGN.md "Orders"; core/src/checkout.rs): the price of
 * one coin in hundredths of the currency, and the quantity truncated to 8 places. */
function sandboxQuote(coin, currency, amount) {
  const usdCents = { btc: 6500000n, eth: 320000n, ltc: 8000n, sol: 15000n, usdc: 100n, usdt: 100n, dai: 100n }[coin];
  const per100 = { usd: 100n, eur: 92n, gbp: 79n }[currency];
  const price = (usdCents * per100) / 100n;
  const [whole, frac = ""] = amount.split(".");
  const amountMinor = BigInt(whole) * 100n + BigInt((frac + "00").slice(0, 2));
  const units = (amountMinor * 100000000n) / price;
  const fraction = String(units % 100000000n).padStart(8, "0").replace(/0+$/, "");
  return {
    price: `${price / 100n}.${String(price % 100n).padStart(2, "0")}`,
    quantity: fraction ? `${units / 100000000n}.${fraction}` : String(units / 100000000n),
  };
}

/** A 6-digit sign-in code that is not `code`. */
function otherCode(code) {
  return String((Number(code) + 1) % 1000000).padStart(6, "0");
}

/** The partner's events without `resize`, as [type, payload]. */
async function eventTrail(page) {
  return (await events(page)).filter((e) => e.type !== "resize").map((e) => [e.type, e.payload]);
}

/** The screen names the partner received, in order. */
async function screenNames(page) {
  return (await events(page)).filter((e) => e.type === "screen").map((e) => e.payload.name);
}

/** The terms and values of the frame's summary list, as text. */
function rows(frame) {
  return frame.evaluate(() => [...document.querySelectorAll(".summary dt, .summary dd")].map((el) => el.textContent));
}

/** Inputs, selects and textareas in the frame's main that can be edited. */
function editableControls(frame) {
  return frame.evaluate(() =>
    [...document.querySelectorAll("main input, main select, main textarea")]
      .filter((el) => !(el.tagName === "INPUT" && el.readOnly) && !el.disabled)
      .map((el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")),
  );
}

/** Buttons labelled "Buy now" in the frame now. */
function buyButtons(frame) {
  return frame.getByRole("button", { name: "Buy now", exact: true }).count();
}

/**
 * Watches the frame for a "Buy now" button from now on: every time one appears or goes, the
 * frame's `__buyLog` gets true or false (a MutationObserver on the whole document, so a button
 * that showed for one render is seen too). Returns whether one is there now.
 */
function watchBuy(frame) {
  return frame.evaluate(() => {
    const present = () => [...document.querySelectorAll("button")].some((b) => b.textContent === "Buy now");
    const state = { log: [], last: present() };
    window.__buyLog = state.log;
    new MutationObserver(() => {
      const now = present();
      if (now !== state.last) {
        state.last = now;
        state.log.push(now);
      }
    }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
    return state.last;
  });
}

/** What `watchBuy` saw so far. */
function buyLog(frame) {
  return frame.evaluate(() => window.__buyLog.slice());
}

/** The frame's field error list for `id` (`#<id>-error`), as text of each item. */
function fieldErrors(frame, id) {
  return frame.locator(`#${id}-error li`).allTextContents();
}

/** Submits `code` on the sign-in screen and returns the code field's errors. */
async function tryCode(frame, code) {
  await frame.locator("#signin-code").fill(code);
  await answered(frame, "signin-code", "Sign in", () => frame.getByRole("button", { name: "Sign in", exact: true }).click());
  return fieldErrors(frame, "signin-code");
}

/** Decodes the setup screen's QR code (its img's PNG data URI) with jsQR. */
function decodeQr(dataUri) {
  assert.match(dataUri, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
  const png = PNG.sync.read(Buffer.from(dataUri.slice(dataUri.indexOf(",") + 1), "base64"));
  const code = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
  assert.ok(code, "jsQR reads the QR code");
  return code.data;
}

/** The setup screen's QR data URI and manual key once the image has loaded. */
async function setupShown(frame) {
  await heading(frame, "Set up two-factor authentication");
  const img = frame.locator("img.qr");
  await img.waitFor({ state: "visible" });
  await frame.waitForFunction(() => {
    const i = document.querySelector("img.qr");
    return !!i && i.complete && i.naturalWidth > 0;
  });
  assert.equal(await img.getAttribute("alt"), "QR code for your authenticator app");
  const grouped = await frame.locator("code#setup-key").textContent();
  assert.match(grouped, /^([A-Z2-7]{4} )*[A-Z2-7]{1,4}$/, "the key in groups of four");
  return { qr: await img.getAttribute("src"), manual: grouped.replace(/ /g, ""), grouped };
}

/** Types `code` into the 2FA field of `step` ("twofactor" or "setup") and submits it. */
async function submitTotp(frame, step, code) {
  await frame.locator(`#${step}-code`).fill(code);
  await frame.getByRole("button", { name: step === "setup" ? "Turn on 2FA" : "Verify", exact: true }).click();
}

/** Submits a code that fails and waits for the answer: the screen rendered again (its primary
 * button says its name again) with the field's error. */
async function failTotp(frame, step, code) {
  await answered(frame, `${step}-code`, step === "setup" ? "Turn on 2FA" : "Verify", () => submitTotp(frame, step, code));
  await frame.locator(`#${step}-code-error`).waitFor({ state: "visible" });
}

/** Runs `act` (a submit on the screen with the field `id`) and waits for the answer: the screen
 * rendered anew (the page rebuilds the form with each answer: a new field) with its primary
 * button saying `primary` again. */
async function answered(frame, id, primary, act) {
  await frame.locator(`#${id}`).evaluate((el) => (el.dataset.before = "1"));
  await act();
  await frame.waitForFunction(([id, primary]) => {
    const field = document.getElementById(id);
    const button = document.querySelector("main .primary");
    return !!field && !field.dataset.before && !!button && button.textContent === primary;
  }, [id, primary]);
}

/**
 * Records, for the leak check (test 8), what a page and its frames hand out: the widget session
 * tokens the server answered (`POST /v1/widget/session`), and the secrets the test typed or saw
 * (`secrets.add`). `finish` adds the partner page's messages and every frame's storage.
 */
function recorder(p, label) {
  const run = { label, urls: p.seen.requests, tokens: [], codes: [], keys: [], qr: [], recovery: [], emails: [], messages: null, storage: null, cookies: null };
  const pending = [];
  p.context.on("response", (response) => {
    const request = response.request();
    if (request.method() === "POST" && new URL(response.url()).pathname === "/v1/widget/session" && response.status() === 200) {
      pending.push(response.json().then((body) => run.tokens.push(body.token)).catch((error) => run.tokens.push(`unread: ${error}`)));
    }
  });
  run.finish = async () => {
    await Promise.all(pending);
    run.messages = await p.page.evaluate(() => JSON.stringify({ events: window.partner.events, raw: window.partner.raw }));
    run.storage = [];
    for (const frame of p.page.frames()) {
      run.storage.push(
        await frame.evaluate(() => {
          const all = (s) => {
            const out = {};
            for (let i = 0; i < s.length; i++) out[s.key(i)] = s.getItem(s.key(i));
            return out;
          };
          return { url: location.href, local: all(localStorage), session: all(sessionStorage), cookie: document.cookie };
        }),
      );
    }
    run.cookies = await p.context.cookies();
  };
  return run;
}

/** Every run recorded by this file's sandbox tests, for test 8. */
const runs = [];

describe("purchases in Chromium (sandbox server)", () => {
  const suite = sandboxSuite("rampart-e2e-purchase-");
  let server, site, browser, partner;
  before(() => {
    ({ server, browser, partner } = suite);
    [site] = suite.sites;
  });

  /** A page on the partner site with the widget rendered with `options` (the suite's partner
   * unless `as` is given). */
  async function open(options, { as = partner, viewport = { width: 480, height: 760 }, record = null } = {}) {
    let run = null;
    // Recording starts before the widget exists (a one-screen checkout opens its session at once).
    const before = (p) => (run = record ? recorder(p, record) : null);
    const opened = await openWidget(browser, site, server, { publicKey: as.publicKey, clientName: "Acme Shop", ...options }, { viewport, before });
    return { ...opened, run };
  }

  /** One-screen checkout options: one token, its address, an amount. */
  const oneScreen = (amount = "25") => ({ tokens: "btc", receiveAddress: { btc: BTC_ADDRESS }, amount });

  test("1. full purchase: home, coin, amount, address, sign-in, review, Buy, confirmation; the order read back; the exact events", T, async () => {
    const email = "full@example.com";
    const { p, frame, run, handle } = await open({}, { record: "full purchase" });
    run.emails.push(email);
    try {
      await frame.getByRole("button", { name: "Start" }).click();
      await heading(frame, "Choose a coin");
      await frame.getByText("Bitcoin", { exact: true }).click();
      await frame.getByRole("button", { name: "Continue" }).click();
      await heading(frame, "How much do you want to spend?");
      await frame.locator("#amount").fill("30");
      await frame.locator("#currency").selectOption("gbp");
      await frame.getByRole("button", { name: "Continue" }).click();
      await heading(frame, "Where should we send your Bitcoin?");
      await frame.locator("#address").fill(BTC_ADDRESS);
      await frame.getByRole("button", { name: "Continue" }).click();

      await heading(frame, "Sign in");
      const code = await signIn(frame, email);
      run.codes.push(code);
      await heading(frame, "Your purchase");
      assert.deepEqual(await rows(frame), ["Coin", "Bitcoin (BTC)Change", "Amount", "30 GBPChange", "Receive address", BTC_ADDRESS + "Change"]);
      await frame.getByRole("button", { name: "Buy now", exact: true }).click();

      await heading(frame, "Purchase complete");
      const orderId = await frame.locator("code#order-id").textContent();
      assert.match(orderId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      const quote = sandboxQuote("btc", "gbp", "30");
      assert.deepEqual(quote, { price: "51350.00", quantity: "0.00058422" });
      assert.deepEqual(await rows(frame), [
        "Order ID", orderId,
        "Coin", "Bitcoin (BTC)",
        "Amount", "30 GBP",
        "Quantity", `${quote.quantity} BTC`,
        "Price", `1 BTC = ${quote.price} GBP`,
        "Receive address", BTC_ADDRESS,
      ]);
      assert.equal(await frame.locator("main a").count(), 0, "no partner button without widgetText and widgetButtonURL");

      // The partner confirms the order server-side, with its secret key.
      const { contactId } = await api(server, "GET", `/v1/widget/contacts?email=${encodeURIComponent(email)}`, partner.secretKey);
      const read = await api(server, "GET", `/v1/widget/orders/${orderId}`, partner.secretKey);
      assert.equal(read.message, "Order retrieved.");
      assert.equal(read.code, 200);
      const { createdAt, updatedAt, ...order } = read.order;
      assert.deepEqual(order, {
        orderId,
        contactId,
        coin: "btc",
        amount: "30",
        currency: "gbp",
        address: BTC_ADDRESS,
        price: quote.price,
        quantity: quote.quantity,
        status: "completed",
      });
      const now = Date.now() / 1000;
      assert.ok(Number.isInteger(createdAt) && createdAt <= updatedAt && Math.abs(now - updatedAt) < 60, `times ${createdAt} ${updatedAt}`);
      const list = await api(server, "GET", `/v1/widget/orders?contactId=${contactId}`, partner.secretKey);
      assert.deepEqual(list.orders.map((o) => o.orderId), [orderId]);
      assert.equal(list.next, null);

      // The events: ready, the screens in order, then the order's two events with its id (and the
      // confirmation screen the page then shows); resize events interleave and are left out.
      await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen" && e.payload.name === "confirmation"));
      assert.deepEqual(await eventTrail(p.page), [
        ["ready", { url: handle.url }],
        ["screen", { name: "home" }],
        ["screen", { name: "coin" }],
        ["screen", { name: "amount" }],
        ["screen", { name: "address" }],
        ["screen", { name: "signin" }],
        ["screen", { name: "review" }],
        ["order.created", { orderId }],
        ["order.completed", { orderId, status: "completed" }],
        ["screen", { name: "confirmation" }],
      ]);
      for (const e of await events(p.page)) if (e.type === "resize") assert.deepEqual(Object.keys(e.payload), ["height"]);
      await run.finish();
      runs.push(run);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("2. one-screen checkout, not signed in: sign-in first, then the review read-only, then Buy", T, async () => {
    const email = "onescreen@example.com";
    const { p, frame } = await open({ tokens: "eth", receiveAddress: { eth: ETH_ADDRESS }, amount: "40" });
    try {
      await heading(frame, "Sign in");
      for (const id of ["#amount", "#currency", "#address", "input[name=coin]"]) assert.equal(await frame.locator(id).count(), 0, `no ${id}`);
      await signIn(frame, email);
      await heading(frame, "Your purchase");
      assert.deepEqual(await rows(frame), ["Coin", "Ether (ETH)", "Amount", "40 USD", "Receive address", ETH_ADDRESS]);
      assert.equal(await frame.locator("main p.muted").first().textContent(), "Set by Acme Shop.");
      assert.equal(await frame.getByRole("button", { name: /^Change/ }).count(), 0, "no Change button");
      assert.deepEqual(await editableControls(frame), [], "nothing to edit");
      assert.equal(await frame.getByRole("button", { name: "Back" }).count(), 0);
      await frame.getByRole("button", { name: "Buy now", exact: true }).click();
      await heading(frame, "Purchase complete");
      const orderId = await frame.locator("code#order-id").textContent();
      const { order } = await api(server, "GET", `/v1/widget/orders/${orderId}`, partner.secretKey);
      const quote = sandboxQuote("eth", "usd", "40");
      assert.deepEqual(
        [order.coin, order.amount, order.currency, order.address, order.price, order.quantity, order.status],
        ["eth", "40", "usd", ETH_ADDRESS, quote.price, quote.quantity, "completed"],
      );
      await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen" && e.payload.name === "confirmation"));
      assert.deepEqual(await screenNames(p.page), ["home", "signin", "review", "confirmation"]);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("3. KYC passed without 2FA: the setup (QR decoded, equal to the key) before any Buy, even going back; its code turns 2FA on, the recovery codes, then Buy", T, async () => {
    const email = "kyc.setup+1@example.com";
    // Token and amount given, the address asked: the setup screen has a way back to it.
    const { p, frame, run } = await open({ tokens: "btc", amount: "25" }, { record: "setup" });
    run.emails.push(email);
    try {
      await heading(frame, "Where should we send your Bitcoin?");
      await frame.locator("#address").fill(BTC_ADDRESS);
      await frame.getByRole("button", { name: "Continue" }).click();
      run.codes.push(await signIn(frame, email));
      await heading(frame, "Your purchase");
      // Not KYC-passed, no 2FA: this contact may buy.
      assert.equal(await watchBuy(frame), true, "Buy now before the KYC mark");
      await frame.getByRole("button", { name: KYC_BUTTON }).click();

      const first = await setupShown(frame);
      run.keys.push(first.manual);
      run.qr.push(first.qr);
      assert.equal(await frame.locator("main p").first().textContent(), "2FA is required before you can buy.");
      assert.equal(await buyButtons(frame), 0);
      // Back to the review (no Buy: it leads to the setup again, with a new QR code and key).
      await frame.getByRole("button", { name: "Back" }).click();
      await heading(frame, "Your purchase");
      assert.equal(await frame.locator("img.qr, code#setup-key").count(), 0, "the QR code and key left with their screen");
      assert.equal(await buyButtons(frame), 0);
      await frame.getByRole("button", { name: "Set up 2FA", exact: true }).click();
      const { qr, manual } = await setupShown(frame);
      run.keys.push(manual);
      run.qr.push(qr);
      assert.notEqual(manual, first.manual, "a new secret");
      assert.equal(manual.length, 32, "160 bits in unpadded base32");
      // The QR code is the Key URI of this secret, labelled with the signed-in email.
      const uri = decodeQr(qr);
      assert.equal(uri, `otpauth://totp/Rampart2FA:kyc.setup%2B1%40example.com?secret=${manual}&issuer=Rampart2FA&algorithm=SHA1&digits=6&period=30`);
      const secret = new URL(uri).searchParams.get("secret");
      assert.equal(secret, manual, "the QR code's secret is the key shown");
      assert.equal(await buyButtons(frame), 0);

      // The replaced secret's code no longer works; a wrong code neither: the server's message at
      // the field, still no Buy.
      const old = totpCode(first.manual);
      const wrong = wrongTotpCode(secret);
      run.codes.push(old, wrong);
      for (const code of [old, wrong]) {
        await failTotp(frame, "setup", code);
        assert.deepEqual(await fieldErrors(frame, "setup-code"), [TOTP_FAILED]);
        assert.equal(await buyButtons(frame), 0);
      }
      // No Buy now at any moment since the KYC mark (the observer saw it go once, and never
      // come back).
      assert.deepEqual(await buyLog(frame), [false], "no Buy now since the KYC mark");

      // The code an authenticator computes from the decoded secret turns 2FA on.
      const good = totpCode(secret);
      run.codes.push(good);
      await submitTotp(frame, "setup", good);
      // The recovery codes, shown once, before the review.
      run.recovery.push(...(await saveRecoveryCodes(frame)));
      await heading(frame, "Your purchase");
      assert.equal(await buyButtons(frame), 1);
      assert.deepEqual(await buyLog(frame), [false, true], "Buy now only once 2FA is on");
      assert.equal(await frame.getByRole("button", { name: KYC_BUTTON }).count(), 0, "KYC passed: no KYC control");
      const { contactId } = await api(server, "GET", `/v1/widget/contacts?email=${encodeURIComponent(email)}`, partner.secretKey);
      assert.deepEqual(await api(server, "GET", `/v1/auth/2fa?contactId=${contactId}`, partner.secretKey), { message: "2FA is true.", code: 200, status: true, recoveryCodesRemaining: 10 });
      // The QR code and key are gone from the page with the setup screen.
      assert.equal(await frame.locator("img.qr, code#setup-key").count(), 0);

      await frame.getByRole("button", { name: "Buy now", exact: true }).click();
      await heading(frame, "Purchase complete");
      const orderId = await frame.locator("code#order-id").textContent();
      assert.equal((await api(server, "GET", `/v1/widget/orders/${orderId}`, partner.secretKey)).order.status, "completed");
      await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen" && e.payload.name === "confirmation"));
      assert.deepEqual(await screenNames(p.page), ["home", "address", "signin", "review", "setup", "review", "setup", "review", "confirmation"]);
      await run.finish();
      runs.push(run);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("3. a partner with the 2FA waiver: KYC passed, no setup, Buy at once", T, async () => {
    const waived = createPartner(server.db, "Waived Shop");
    const done = cli(["partner", "waive-2fa", "--db", server.db, "--partner", waived.superuserId]);
    assert.deepEqual(done, { partnerId: waived.superuserId, twoFactorWaived: true });
    const { p, frame } = await open(oneScreen("30"), { as: waived });
    try {
      await signIn(frame, "waived@example.com");
      await heading(frame, "Your purchase");
      await frame.getByRole("button", { name: KYC_BUTTON }).click();
      await frame.getByRole("button", { name: KYC_BUTTON }).waitFor({ state: "detached" });
      assert.equal(await frame.locator("main h1").textContent(), "Your purchase");
      assert.equal(await buyButtons(frame), 1);
      await frame.getByRole("button", { name: "Buy now", exact: true }).click();
      await heading(frame, "Purchase complete");
      await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen" && e.payload.name === "confirmation"));
      assert.deepEqual(await screenNames(p.page), ["home", "signin", "review", "confirmation"], "no setup screen");
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("4. 2FA enabled: a wrong code, a replayed code, 5 failures then the wait (Retry-After); never a Buy", T, async () => {
    const email = "verify@example.com";
    // Session 1: 2FA set up in the widget.
    let manual;
    {
      const { p, frame } = await open(oneScreen());
      try {
        await signIn(frame, email);
        await frame.getByRole("button", { name: KYC_BUTTON }).click();
        ({ manual } = await setupShown(frame));
        await submitTotp(frame, "setup", totpCode(manual));
        await saveRecoveryCodes(frame);
        await heading(frame, "Your purchase");
        p.assertClean(assert);
      } finally {
        await p.close();
      }
    }
    // Session 2: the code is asked; a wrong one fails; the next step's code passes.
    const valid = totpCode(manual, 1);
    {
      const { p, frame } = await open(oneScreen());
      try {
        await signIn(frame, email);
        await heading(frame, "Two-factor authentication");
        assert.equal(await watchBuy(frame), false);
        assert.equal(await frame.locator("label[for=twofactor-code]").textContent(), "Authenticator code");
        await failTotp(frame, "twofactor", wrongTotpCode(manual));
        assert.deepEqual(await fieldErrors(frame, "twofactor-code"), [TOTP_FAILED]);
        assert.equal(await buyButtons(frame), 0);
        await submitTotp(frame, "twofactor", valid);
        await heading(frame, "Your purchase");
        assert.deepEqual(await buyLog(frame), [true], "Buy now only after the code passed");
        p.assertClean(assert);
      } finally {
        await p.close();
      }
    }
    // Session 3: the same code again is a replay; then 5 wrong codes; then the wait.
    const { p, frame } = await open(oneScreen());
    const retryAfter = [];
    p.page.on("response", (response) => {
      if (new URL(response.url()).pathname === "/v1/widget/session/2fa/verify" && response.status() === 429) retryAfter.push(response.headers()["retry-after"]);
    });
    try {
      await signIn(frame, email);
      await heading(frame, "Two-factor authentication");
      assert.equal(await watchBuy(frame), false);
      await failTotp(frame, "twofactor", valid);
      assert.deepEqual(await fieldErrors(frame, "twofactor-code"), [TOTP_FAILED], "the used code is refused");
      for (let i = 1; i <= 5; i++) {
        await failTotp(frame, "twofactor", wrongTotpCode(manual, i));
        assert.deepEqual(await fieldErrors(frame, "twofactor-code"), [TOTP_FAILED], `wrong code ${i}`);
      }
      // The 6th attempt is refused unevaluated: 429 with Retry-After, and the page waits.
      await failTotp(frame, "twofactor", wrongTotpCode(manual, 6));
      assert.equal(retryAfter.length, 1, "one 429");
      const seconds = Number(retryAfter[0]);
      assert.ok(seconds === 30 || seconds === 29, `Retry-After ${retryAfter[0]}`);
      assert.deepEqual(await fieldErrors(frame, "twofactor-code"), [
        `Too many failed 2FA attempts, try again in ${seconds} seconds`,
        `Wait ${seconds} seconds, then try again.`,
      ]);
      const verify = frame.getByRole("button", { name: "Verify", exact: true });
      assert.equal(await verify.getAttribute("aria-disabled"), "true");
      assert.equal(await verify.isDisabled(), true, "disabled to assistive technology and Playwright");
      // While it waits, Verify sends nothing (clicked regardless, and Enter in the field).
      const before = p.seen.requests.filter((u) => u.endsWith("/2fa/verify")).length;
      await frame.locator("#twofactor-code").fill(totpCode(manual, 1));
      await verify.click({ force: true });
      await frame.locator("#twofactor-code").press("Enter");
      await frame.evaluate(() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0))));
      assert.equal(p.seen.requests.filter((u) => u.endsWith("/2fa/verify")).length, before, "no request while waiting");
      assert.equal(await verify.getAttribute("aria-disabled"), "true");
      assert.deepEqual(await buyLog(frame), [], "never a Buy now");
      await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen" && e.payload.name === "twofactor"));
      assert.deepEqual(await screenNames(p.page), ["home", "signin", "twofactor"]);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("6. the confirmation's partner button: widgetText and widgetButtonURL, target _top, the top page navigates; none without them", T, async () => {
    const shop = createPartner(server.db, "Button Shop");
    const url = `${site.origin}/static.html?from=widget`;
    await api(server, "POST", "/v1/users/widgetText", shop.secretKey, { widgetText: "Back to the shop" });
    await api(server, "POST", "/v1/users/widgetButtonURL", shop.secretKey, { widgetButtonURL: url });
    assert.equal((await api(server, "GET", "/v1/users/widgetButtonURL", shop.secretKey)).widgetButtonURL, url);
    {
      const { p, frame } = await open(oneScreen(), { as: shop });
      try {
        await signIn(frame, "button@example.com");
        await frame.getByRole("button", { name: "Buy now", exact: true }).click();
        await heading(frame, "Purchase complete");
        const link = frame.getByRole("link", { name: "Back to the shop" });
        const shown = await link.evaluate((a) => ({ text: a.textContent, href: a.getAttribute("href"), target: a.getAttribute("target"), rel: (a.getAttribute("rel") || "").split(/\s+/) }));
        assert.deepEqual({ ...shown, rel: undefined }, { text: "Back to the shop", href: url, target: "_top", rel: undefined });
        assert.ok(shown.rel.includes("noopener"), `rel ${shown.rel}`);
        assert.equal(await frame.locator("main a").count(), 1);
        const partnerPage = p.page.url();
        assert.notEqual(partnerPage, url);
        await Promise.all([p.page.waitForURL(url, { timeout: WAIT }), link.click()]);
        // The top page (the partner's main frame) is the button's URL now; the widget is gone.
        assert.equal(p.page.mainFrame().url(), url);
        assert.equal(await p.page.title(), "A static page");
        assert.equal(p.page.frames().length, 1);
        p.assertClean(assert);
      } finally {
        await p.close();
      }
    }
    // The suite's partner set neither: no link at all on its confirmation.
    assert.equal((await api(server, "GET", "/v1/users/widgetText", partner.secretKey)).widgetText, null);
    const { p, frame } = await open(oneScreen());
    try {
      await signIn(frame, "nobutton@example.com");
      await frame.getByRole("button", { name: "Buy now", exact: true }).click();
      await heading(frame, "Purchase complete");
      assert.equal(await frame.locator("main a").count(), 0);
      assert.equal(await frame.getByRole("link").count(), 0);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("5. a sign-in code tried wrong 5 times is dead: the right one then gets the expired message; a new code works", T, async () => {
    const { p, frame } = await open(oneScreen());
    try {
      const code = await requestSignInCode(frame, "five@example.com");
      for (let i = 1; i <= 5; i++) assert.deepEqual(await tryCode(frame, otherCode(code)), [CODE_WRONG], `wrong try ${i}`);
      assert.deepEqual(await tryCode(frame, code), [CODE_EXPIRED], "the right code after 5 wrong tries");
      assert.equal(await frame.locator("main h1").textContent(), "Sign in");
      await frame.getByRole("button", { name: "Send a new code" }).click();
      await frame.locator("p.sandbox-code").filter({ hasNotText: code }).waitFor({ state: "visible" });
      const [, fresh] = SANDBOX_BANNER.exec(await frame.locator("p.sandbox-code").textContent());
      await frame.locator("#signin-code").fill(fresh);
      await frame.getByRole("button", { name: "Sign in", exact: true }).click();
      await heading(frame, "Your purchase");
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("8. no secret leaks: session tokens, sign-in codes, the 2FA key, TOTP codes, the QR code and the email", T, async () => {
    assert.deepEqual(runs.map((r) => r.label), ["full purchase", "setup"], "tests 1 and 3 recorded their runs");
    // Each log line without its time stamp and latency (whose digits could hold any 6-digit code).
    const log = server.log.map((line) => line.replace(/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z\s+/, "").replace(/ latency_us=[0-9]+/, "")).join("\n");
    assert.ok(server.log.length > 0, "the server's log was captured");
    // A 6-digit code counts as found only standing alone (not inside a longer number, such as a
    // time in the log).
    const contains = (text, secret) => (/^[0-9]{6}$/.test(secret) ? new RegExp(`(?<![0-9])${secret}(?![0-9])`).test(text) : text.includes(secret));
    for (const run of runs) {
      assert.ok(run.tokens.length >= 1 && run.tokens.every((t) => /^ws_[A-Za-z0-9_-]{43}$/.test(t)), `${run.label}: tokens captured ${run.tokens}`);
      assert.ok(run.codes.length >= 1);
      if (run.label === "setup") assert.equal(run.recovery.length, 10, "the recovery codes were recorded");
      assert.ok(run.urls.some((u) => u.endsWith("/v1/widget/session/signin")), `${run.label}: the requests were recorded`);
      assert.ok(run.messages.includes("order.completed"), `${run.label}: the messages were recorded`);
      const urls = run.urls.join("\n");
      const secrets = [
        ...run.tokens.map((s) => ["session token", s]),
        ...run.codes.map((s) => ["code", s]),
        ...run.keys.map((s) => ["2FA key", s]),
        ...run.qr.map((s) => ["QR data URI", s]),
        ...run.qr.map((s) => ["QR data", s.slice(s.indexOf(",") + 1, s.indexOf(",") + 65)]),
        ...run.recovery.flatMap((s) => [["recovery code", s], ["recovery code", s.replace(/-/g, "")]]),
      ];
      for (const [what, secret] of secrets) {
        assert.ok(!contains(urls, secret), `${run.label}: a ${what} in a request URL`);
        assert.ok(!contains(run.messages, secret), `${run.label}: a ${what} in a message to the partner page`);
        assert.ok(!contains(log, secret), `${run.label}: a ${what} in the server's log`);
      }
      for (const email of run.emails) {
        for (const form of [email, encodeURIComponent(email)]) {
          assert.ok(!urls.includes(form), `${run.label}: the email in a request URL`);
          assert.ok(!run.messages.includes(form), `${run.label}: the email in a message to the partner page`);
          assert.ok(!log.includes(form), `${run.label}: the email in the server's log`);
        }
      }
      // Nothing at all is stored: no storage in any frame, no cookie.
      assert.equal(run.storage.length, 2, "the partner page and the widget frame");
      for (const s of run.storage) assert.deepEqual({ local: s.local, session: s.session, cookie: s.cookie }, { local: {}, session: {}, cookie: "" }, `${run.label}: storage of ${s.url}`);
      assert.deepEqual(run.cookies, [], `${run.label}: cookies`);
    }
  });
});

/** Signs `email` in over HTTP as the page does (`POST /v1/widget/session`, `/email`, `/signin`),
 * so the partner has a contact for it. */
async function signInOverHttp(server, partner, email) {
  const call = async (path, body, token) => {
    const response = await fetch(server.base + path, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(WAIT),
    });
    const json = await response.json();
    assert.equal(response.status, 200, `${path}: ${JSON.stringify(json)}`);
    return json;
  };
  const { token } = await call("/v1/widget/session", { publicKey: partner.publicKey, origin: null });
  const { sandboxCode } = await call("/v1/widget/session/email", { email }, token);
  await call("/v1/widget/session/signin", { email, code: sandboxCode }, token);
}

describe("sign-in codes and sessions that expire, and the 2FA lock (servers with test hooks)", () => {
  let dir, shortCodes, shortSessions, clocked, clockFile, site, browser, codesPartner, sessionsPartner, clockedPartner;

  before(async () => {
    dir = tempDir("rampart-e2e-expiry-");
    shortCodes = await startServer({ dir, name: "codes", args: ["--sign-in-code-ttl-secs", "2"], before: (db) => createPartner(db, "Acme Shop") });
    shortSessions = await startServer({ dir, name: "sessions", args: ["--session-idle-secs", "3"], before: (db) => createPartner(db, "Acme Shop") });
    // The clock of this one is the absolute Unix time in the file (it stands still between
    // writes), so a test can pass throttle waits. It must hold a valid time at the start.
    clockFile = join(dir, "clock");
    setClock(Math.floor(Date.now() / 1000));
    clocked = await startServer({ dir, name: "clocked", args: ["--test-clock-file", clockFile], before: (db) => createPartner(db, "Acme Shop") });
    codesPartner = shortCodes.made;
    sessionsPartner = shortSessions.made;
    clockedPartner = clocked.made;
    site = await startPartnerSite();
    browser = await launchBrowser();
  });

  after(async () => {
    if (browser) await browser.close();
    if (site) await site.stop();
    for (const server of [shortCodes, shortSessions, clocked]) if (server) await server.stop();
    cleanup(dir);
  });

  function open(server, partner, options) {
    return openWidget(browser, site, server, { publicKey: partner.publicKey, clientName: "Acme Shop", ...options });
  }

  /** Sets the clocked server's time to `seconds` (Unix): a new file renamed over the old one, so
   * the server never reads it half written. */
  function setClock(seconds) {
    writeFileSync(`${clockFile}.next`, `${seconds}\n`);
    renameSync(`${clockFile}.next`, clockFile);
  }

  test("4. 2FA locked after 100 failures (423): the page says so, with no code field, no Verify and no Buy", { timeout: 40000 }, async () => {
    const email = "locked@example.com";
    // The server's clock set to now, so otplib's code of the real time enables 2FA.
    let now = Math.floor(Date.now() / 1000);
    setClock(now);
    // A contact with 2FA on: signed in once over HTTP (as the page would), 2FA turned on by the
    // partner's API with the contact id it looks up.
    await signInOverHttp(clocked, clockedPartner, email);
    const key = clockedPartner.secretKey;
    const { contactId } = await api(clocked, "GET", `/v1/widget/contacts?email=${encodeURIComponent(email)}`, key);
    const created = await api(clocked, "GET", `/v1/auth/create2fa?contactId=${contactId}`, key);
    await api(clocked, "POST", "/v1/auth/enable2fa", key, { token: totpCode(created.details.manual), contactId });
    // 100 consecutive failures through the partner's verify (a malformed code counts as one),
    // moving the server's clock past each throttle wait, min(30 * 2^(k-5), 3600) s after the
    // k-th failure, so every attempt is evaluated.
    const statuses = [];
    for (let k = 1; k <= 100; k++) {
      const response = await fetch(`${clocked.base}/v1/auth/verify2fa`, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify({ contactId, token: "12345" }),
        signal: AbortSignal.timeout(WAIT),
      });
      statuses.push(response.status);
      await response.arrayBuffer();
      if (k >= 5) {
        now += Math.min(30 * 2 ** (k - 5), 3600) + 1;
        setClock(now);
      }
    }
    assert.deepEqual(statuses, new Array(100).fill(401), "every attempt evaluated and failed");

    const { p, frame } = await open(clocked, clockedPartner, { tokens: "btc", receiveAddress: { btc: BTC_ADDRESS }, amount: "25" });
    try {
      await signIn(frame, email);
      await heading(frame, "Two-factor authentication");
      assert.equal(await watchBuy(frame), false);
      await frame.locator("#twofactor-code").fill(totpCode(created.details.manual));
      await frame.getByRole("button", { name: "Verify" }).click();
      const alert = frame.getByRole("alert").filter({ hasText: LOCKED });
      await alert.waitFor({ state: "visible" });
      assert.equal(await alert.textContent(), LOCKED);
      assert.match(await frame.locator("main").innerText(), /Contact the support of Acme Shop to unlock it\./);
      assert.equal(await frame.locator("#twofactor-code").count(), 0, "no code field");
      assert.equal(await frame.locator("main button[type=submit], main .primary").count(), 0, "no submit");
      assert.equal(await frame.getByRole("button", { name: "Verify" }).count(), 0);
      assert.equal(await buyButtons(frame), 0);
      assert.deepEqual(await buyLog(frame), [], "never a Buy now");
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("5. an expired sign-in code (server: --sign-in-code-ttl-secs 2, 3 s later) gets the expired message", T, async () => {
    const { p, frame } = await open(shortCodes, codesPartner, { tokens: "btc", receiveAddress: { btc: BTC_ADDRESS }, amount: "25" });
    try {
      const code = await requestSignInCode(frame, "late@example.com");
      await new Promise((done) => setTimeout(done, 3000)); // the timer under test: past the 2 s
      assert.deepEqual(await tryCode(frame, code), [CODE_EXPIRED]);
      assert.equal(await frame.locator("main h1").textContent(), "Sign in");
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("5. an idle session (server: --session-idle-secs 3, 4 s later): Buy goes back to sign-in, then the same review", T, async () => {
    const email = "idle@example.com";
    const { p, frame } = await open(shortSessions, sessionsPartner, { tokens: "eth", amount: "35" });
    try {
      await heading(frame, "Where should we send your Ether?");
      await frame.locator("#address").fill(ETH_ADDRESS);
      await frame.getByRole("button", { name: "Continue" }).click();
      await signIn(frame, email);
      await heading(frame, "Your purchase");
      const review = ["Coin", "Ether (ETH)", "Amount", "35 USD", "Receive address", ETH_ADDRESS + "Change"];
      assert.deepEqual(await rows(frame), review);
      await new Promise((done) => setTimeout(done, 4000)); // the timer under test: past the 3 s
      await frame.getByRole("button", { name: "Buy now", exact: true }).click();
      await heading(frame, "Sign in");
      const notice = frame.getByRole("alert");
      await notice.waitFor({ state: "visible" });
      assert.equal(await notice.textContent(), SESSION_EXPIRED_NOTICE);
      assert.equal(await frame.locator("#email").inputValue(), email, "the email is kept");
      await signIn(frame, email);
      await heading(frame, "Your purchase");
      assert.deepEqual(await rows(frame), review, "the same amount and address");
      assert.equal(await frame.getByRole("alert").count(), 0, "the notice is gone");
      await frame.getByRole("button", { name: "Buy now", exact: true }).click();
      await heading(frame, "Purchase complete");
      const orderId = await frame.locator("code#order-id").textContent();
      const { order } = await api(shortSessions, "GET", `/v1/widget/orders/${orderId}`, sessionsPartner.secretKey);
      assert.deepEqual([order.coin, order.amount, order.address, order.status], ["eth", "35", ETH_ADDRESS, "completed"]);
      await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen" && e.payload.name === "confirmation"));
      assert.deepEqual(await screenNames(p.page), ["home", "address", "signin", "review", "signin", "review", "confirmation"]);
      // One order in all: the refused Buy placed none.
      const list = await api(shortSessions, "GET", `/v1/widget/orders?contactId=${order.contactId}`, sessionsPartner.secretKey);
      assert.deepEqual(list.orders.map((o) => o.orderId), [orderId]);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });
});

describe("production: purchases unavailable (approved production widget)", () => {
  let dir, production, httpsSite, browser, shop;

  before(async () => {
    dir = tempDir("rampart-e2e-purchase-prod-");
    httpsSite = await startPartnerSite({ https: true, dir });
    production = await startServer({
      dir,
      environment: "production",
      before: (db) => {
        const made = createPartner(db, "Live Shop", "production");
        const done = cli(["partner", "approve-widget", "--db", db, "--partner", made.superuserId, "--environment", "production"]);
        assert.equal(done.widgetApproved, true);
        return made;
      },
    });
    shop = production.made;
    // Production takes only registered https origins: the https partner page's.
    await registerOrigins(production, shop, [httpsSite.origin]);
    browser = await launchBrowser();
  });

  after(async () => {
    if (browser) await browser.close();
    if (httpsSite) await httpsSite.stop();
    if (production) await production.stop();
    cleanup(dir);
  });

  test("7. the review says purchases are unavailable: no sign-in, no Buy, no session, no order", T, async () => {
    const options = { publicKey: shop.publicKey, clientName: "Live Shop", tokens: "btc", receiveAddress: { btc: BTC_ADDRESS }, amount: "25" };
    const { p, frame } = await openWidget(browser, httpsSite, production, options, { https: true });
    try {
      await heading(frame, "Your purchase");
      const notice = frame.locator("p.notice");
      assert.equal(await notice.textContent(), PURCHASES_UNAVAILABLE);
      assert.equal(await notice.getAttribute("role"), "status");
      assert.equal(await buyButtons(frame), 0);
      assert.equal(await frame.getByRole("button", { name: KYC_BUTTON }).count(), 0);
      assert.equal(await frame.locator("#email, #signin-code").count(), 0, "no sign-in asked");
      assert.equal(await frame.locator(".badge").count(), 0, "no sandbox badge");
      assert.equal(await frame.locator("main .primary").textContent(), "Copy link");
      assert.deepEqual(await rows(frame), ["Coin", "Bitcoin (BTC)", "Amount", "25 USD", "Receive address", BTC_ADDRESS]);
      await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen" && e.payload.name === "review"));
      assert.deepEqual(await screenNames(p.page), ["home", "review"]);
      // The page opened no widget session, so nothing could be ordered; the partner's reads agree.
      assert.deepEqual(p.seen.requests.filter((u) => u.includes("/v1/widget/session")), [], "no session request");
      assert.deepEqual(await api(production, "GET", `/v1/widget/orders?contactId=${randomUUID()}`, shop.secretKey), {
        message: "Orders retrieved.",
        code: 200,
        orders: [],
        next: null,
      });
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });
});
