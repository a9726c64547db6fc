// Recovery in the widget (SPEC 8.3) in Chromium against the real rampart-server: the recovery
// codes shown once after turning 2FA on (the downloaded .txt holds exactly the codes shown), a
// person who lost the authenticator using one on the verify screen in a fresh browser (2FA off,
// the setup again for a KYC-passed contact, the purchase hold on the review with Buy refused, the
// hold passing), and a contact with 3 codes left getting new ones for an authenticator code. Each
// in light and dark theme (axe-core, the primary action at 420 x 550) and at 320 x 568 (no
// sideways scroll); the codes never in a URL, a message to the partner page, storage, the
// console or the server's log. The server's clock is a test hook (`--test-clock-file`): each
// authenticator code is made for a new 30 s step of it, and the hold is passed by moving it a day.
import assert from "node:assert/strict";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { authenticator } from "otplib";
import {
  ETH_ADDRESS,
  TEST_TIMEOUT,
  WAIT,
  api,
  cleanup,
  createPartner,
  heading,
  launchBrowser,
  maybeScreenshot,
  openWidget,
  recoveryCodesShown,
  saveRecoveryCodes,
  seriousViolations,
  signIn,
  startPartnerSite,
  startServer,
  tempDir,
} from "./harness.mjs";

const T = { timeout: TEST_TIMEOUT };
/** The server's default purchase hold (SPEC 8.2). */
const HOLD_SECS = 86400;
/** The page's texts (widget/src/page/checkout.ts). */
const LOST = "Lost your authenticator? Use a recovery code";
const RECOVERY_FAILED = "This recovery code does not work. Check it, or use another one: each code works once.";
const FILE = "rampart-recovery-codes.txt";
const KYC_BUTTON = "Mark me as KYC passed (sandbox)";

describe("recovery in Chromium (sandbox server with a test clock)", () => {
  let dir, server, site, browser, partner, clockFile;
  /** The server's time (Unix seconds): it stands still between writes. */
  let now;
  /** Every recovery code any test saw, and where the tests looked (for the last test). */
  const seen = { codes: [], urls: [], messages: [], storage: [], console: [] };

  function setClock(seconds) {
    now = seconds;
    writeFileSync(`${clockFile}.next`, `${seconds}\n`);
    renameSync(`${clockFile}.next`, clockFile);
  }

  /** An authenticator app's code for `secret` at the server's time, after moving it to a new
   * 30 s step (each step's code is accepted once). */
  function nextCode(secret) {
    setClock(Math.max(now + 30, Math.floor(Date.now() / 1000)));
    return authenticator.clone({ epoch: now * 1000 }).generate(secret);
  }

  before(async () => {
    dir = tempDir("rampart-e2e-recovery-");
    clockFile = join(dir, "clock");
    setClock(Math.floor(Date.now() / 1000));
    server = await startServer({ dir, args: ["--test-clock-file", clockFile], before: (db) => createPartner(db, "Acme Shop") });
    partner = server.made;
    site = await startPartnerSite();
    browser = await launchBrowser();
  });

  after(async () => {
    if (browser) await browser.close();
    if (site) await site.stop();
    if (server) await server.stop();
    cleanup(dir);
  });

  /** The widget on the partner page: light, dark or 320 (320 x 568, light). The amount is asked
   * (so the review can be left and reached again); ether to its address. The dark run's browser
   * is in Berlin (en-GB), the others in UTC (en-US). */
  async function open(variant) {
    const options = { publicKey: partner.publicKey, clientName: "Acme Shop", tokens: "eth", receiveAddress: { eth: ETH_ADDRESS }, ...(variant === "dark" ? { darkTheme: true } : {}) };
    const viewport = variant === "320" ? { width: 320, height: 568 } : { width: 480, height: 700 };
    const zone = variant === "dark" ? { locale: "en-GB", timezoneId: "Europe/Berlin" } : { locale: "en-US", timezoneId: "UTC" };
    const opened = await openWidget(browser, site, server, options, { viewport, ...zone });
    await opened.p.context.grantPermissions(["clipboard-write"], { origin: server.base });
    return opened;
  }

  /** The amount, then the sign-in as `email`. */
  async function start(frame, email) {
    await heading(frame, "How much do you want to spend?");
    await frame.locator("#amount").fill("25");
    await frame.getByRole("button", { name: "Continue", exact: true }).click();
    await signIn(frame, email);
  }

  /** On each new screen: axe and the primary button at 420 x 550 (light, dark), or no sideways
   * scroll (320); a screenshot under `name` when asked. */
  async function look(opened, variant, name, shot = true) {
    const { frame, element } = opened;
    if (variant === "320") {
      const m = await frame.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth, innerWidth]);
      assert.ok(m[0] <= m[1] && m[2] <= 320, `${name} (320): no sideways scroll (${m})`);
    } else {
      assert.deepEqual(await seriousViolations(frame), [], `${name} (${variant}): axe-core finds no serious or critical violation`);
      const box = await frame.evaluate(() => {
        const b = document.querySelector("main .primary");
        const r = b ? b.getBoundingClientRect() : null;
        return r && { top: r.top, bottom: r.bottom, height: innerHeight, width: innerWidth, scrollY };
      });
      assert.ok(box, `${name}: a primary button`);
      assert.deepEqual([box.width, box.height, box.scrollY], [420, 550, 0], `${name}: the frame is 420 x 550, unscrolled`);
      assert.ok(box.top >= 0 && box.bottom <= box.height, `${name}: the primary button (${box.top}-${box.bottom}) is visible without scrolling`);
    }
    if (shot) await maybeScreenshot(element, `${name}-${variant}`);
  }

  /** What the page handed out so far, for the leak check: request URLs, messages to the partner
   * page, every frame's storage and cookies, console lines. */
  async function record(opened) {
    const { p } = opened;
    seen.urls.push(...p.seen.requests);
    seen.console.push(...p.seen.console);
    seen.messages.push(await p.page.evaluate(() => JSON.stringify({ events: window.partner.events, raw: window.partner.raw })));
    for (const frame of p.page.frames()) {
      seen.storage.push(
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
    assert.deepEqual(await p.context.cookies(), [], "no cookie");
  }

  /** The partner's screen events, in order. */
  function screens(page) {
    return page.evaluate(() => window.partner.events.filter((e) => e.type === "screen").map((e) => e.payload.name));
  }

  /** The setup screen's manual key, once shown. */
  async function setupKey(frame) {
    await heading(frame, "Set up ");
    await frame.locator("code#setup-key").waitFor({ state: "visible" });
    await frame.waitForFunction(() => {
      const img = document.querySelector("img.qr");
      return !!img && img.complete && img.naturalWidth > 0;
    });
    return (await frame.locator("code#setup-key").textContent()).replace(/ /g, "");
  }

  async function contactId(email) {
    return (await api(server, "GET", `/v1/widget/contacts?email=${encodeURIComponent(email)}`, partner.secretKey)).contactId;
  }

  /**
   * The whole way back from a lost authenticator, in `variant`:
   * 1. sign in, mark KYC, set up 2FA (Back from the setup to the review and on again), the codes
   *    screen: Download gives a file of exactly the 10 codes shown, Copy copies, Continue waits
   *    for "I saved my recovery codes";
   * 2. the authenticator is lost: a fresh browser, sign in, "Lost your authenticator?", a wrong
   *    recovery code, then one of the saved ones: 2FA off, the setup (KYC passed) saying so and
   *    until when purchases wait, set up again (new codes), the review with the hold and Buy
   *    refused;
   * 3. (light only) a day later on the server's clock: the review looks again, the session has
   *    idled out, sign in and the 2FA code again, and Buy works.
   */
  async function lostAuthenticator(variant) {
    const email = `lost-${variant}@example.com`;
    let first;
    {
      const opened = await open(variant);
      const { p, frame } = opened;
      try {
        await start(frame, email);
        await heading(frame, "Your purchase");
        await frame.getByRole("button", { name: KYC_BUTTON }).click();
        await setupKey(frame);
        // A way back from the setup: the review, which leads to it again.
        await frame.getByRole("button", { name: "Back", exact: true }).click();
        await heading(frame, "Your purchase");
        assert.equal(await frame.getByRole("button", { name: "Buy now" }).count(), 0);
        await frame.getByRole("button", { name: "Set up 2FA", exact: true }).click();
        const key = await setupKey(frame);
        await frame.locator("#setup-code").fill(nextCode(key));
        await frame.getByRole("button", { name: "Turn on 2FA", exact: true }).click();

        first = await recoveryCodesShown(frame);
        seen.codes.push(...first);
        // (Its screenshots come from screens.test.mjs.)
        await look(opened, variant, "recovery-codes", false);
        assert.equal(await frame.locator("main h1").evaluate((h) => h === document.activeElement), true, "focus on the heading");
        assert.match(await frame.locator("#recovery-codes code").first().evaluate((c) => getComputedStyle(c).fontFamily), /mono/i, "monospace");
        assert.deepEqual(await frame.locator("#recovery-codes code").evaluateAll((cs) => cs.map((c) => c.getClientRects().length)), new Array(10).fill(1), "each code on one line, its groups together");
        // Download: a .txt of the codes, one per line, nothing else.
        const [download] = await Promise.all([p.page.waitForEvent("download", { timeout: WAIT }), frame.getByRole("button", { name: "Download (.txt)" }).click()]);
        assert.equal(download.suggestedFilename(), FILE);
        assert.match(download.url(), /^blob:/, "a blob: its URL holds no code");
        const text = readFileSync(await download.path(), "utf8");
        assert.equal(text, first.join("\n") + "\n", "exactly the 10 codes shown, one per line");
        // Copy: to the clipboard (or, where the browser refuses, the page says to select them).
        await frame.getByRole("button", { name: "Copy codes" }).click();
        await frame.waitForFunction(() => /^(Recovery codes copied\.|Select the codes and copy them\.)$/.test(document.querySelector("[role=status][aria-live]").textContent));
        // Continue waits for the confirmation (shown aria-disabled, so found by keyboard, and
        // saying why when pressed).
        const cont = frame.getByRole("button", { name: "Continue", exact: true });
        assert.equal(await cont.getAttribute("aria-disabled"), "true");
        await cont.focus();
        await p.page.keyboard.press("Enter");
        const error = frame.locator("#codes-saved-error");
        await error.waitFor({ state: "visible" });
        assert.equal(await error.textContent(), "Save your recovery codes, then tick the box to continue.");
        assert.equal(await frame.locator("#codes-saved").evaluate((b) => b === document.activeElement), true, "focus on the box");
        assert.deepEqual(await saveRecoveryCodes(frame), first);
        await heading(frame, "Your purchase");
        assert.equal(await frame.locator("#recovery-codes").count(), 0, "the codes left with their screen");
        assert.equal(await frame.getByRole("button", { name: "Buy now" }).count(), 1);
        assert.deepEqual(await screens(p.page), ["home", "amount", "signin", "review", "setup", "review", "setup", "review"]);
        await record(opened);
        p.assertClean(assert);
      } finally {
        await p.close();
      }
    }
    const id = await contactId(email);
    assert.equal((await api(server, "GET", `/v1/auth/2fa?contactId=${id}`, partner.secretKey)).recoveryCodesRemaining, 10);

    // The phone is gone: a fresh browser, the same person.
    const opened = await open(variant);
    const { p, frame } = opened;
    try {
      await start(frame, email);
      await heading(frame, "Two-factor authentication");
      if (variant !== "320") assert.deepEqual(await seriousViolations(frame), [], `twofactor (${variant}) with the recovery link`);
      await frame.getByRole("button", { name: LOST }).click();
      await heading(frame, "Use a recovery code");
      assert.equal(await frame.locator("main h1").evaluate((h) => h === document.activeElement), true, "focus on the heading");
      await look(opened, variant, "recovery-code");
      await frame.locator("#recovery-code").fill("0000-0000-0000-0000-0000-0000");
      await frame.getByRole("button", { name: "Use recovery code" }).click();
      await frame.locator("#recovery-code-error").waitFor({ state: "visible" });
      assert.equal(await frame.locator("#recovery-code-error").textContent(), RECOVERY_FAILED);
      assert.equal(await frame.locator("#recovery-code").getAttribute("aria-invalid"), "true");
      assert.equal(await frame.locator("#recovery-code").evaluate((f) => f === document.activeElement), true, "focus on the field");
      if (variant !== "320") assert.deepEqual(await seriousViolations(frame), [], `recovery-code error (${variant})`);
      // As written on paper: lower case, with spaces around.
      const used = first[3];
      await frame.locator("#recovery-code").fill(` ${used.toLowerCase()} `);
      await frame.getByRole("button", { name: "Use recovery code" }).click();
      const recoveredAt = now;

      // KYC passed: the setup again, saying 2FA is off and until when purchases wait.
      const key = await setupKey(frame);
      // When purchases resume: in the browser's locale and zone (named), and in UTC besides
      // when that zone is not UTC.
      const until = new Date((recoveredAt + HOLD_SECS) * 1000);
      const utc = until.toISOString().slice(0, 16).replace("T", " ") + " UTC";
      const zone = variant === "dark" ? { timeZone: "Europe/Berlin", locale: "en-GB" } : { timeZone: "UTC", locale: "en-US" };
      const hour = new Intl.DateTimeFormat(zone.locale, { hour: "numeric", minute: "2-digit", timeZone: zone.timeZone }).format(until);
      const when = variant === "dark" ? `.*${hour}.* \\(${utc}\\)\\.` : `.*${hour} UTC\\.`;
      const hold = frame.locator("#hold-notice");
      assert.match(await hold.innerText(), new RegExp(`^You used a recovery code: 2FA is off\\. Purchases are on hold until ${when}$`));
      assert.equal(await hold.locator("time").getAttribute("datetime"), until.toISOString());
      await look(opened, variant, "setup-recovered");
      assert.equal((await api(server, "GET", `/v1/auth/2fa?contactId=${id}`, partner.secretKey)).status, false, "2FA is off");

      await frame.locator("#setup-code").fill(nextCode(key));
      await frame.getByRole("button", { name: "Turn on 2FA", exact: true }).click();
      const second = await recoveryCodesShown(frame);
      seen.codes.push(...second);
      assert.equal(second.filter((c) => first.includes(c)).length, 0, "a new set");
      await saveRecoveryCodes(frame);

      // The review: when purchases resume (local time and UTC) and why; Buy refused.
      await heading(frame, "Your purchase");
      await hold.waitFor({ state: "visible" });
      assert.match(await hold.innerText(), new RegExp(`^Purchases are on hold until ${when}\\s*You turned 2FA off with a recovery code\\. The wait protects you if someone else has your codes\\.$`));
      const buy = frame.getByRole("button", { name: "Buy now" });
      assert.deepEqual([await buy.getAttribute("aria-disabled"), await buy.getAttribute("aria-describedby")], ["true", "hold-notice"]);
      await look(opened, variant, "hold");
      await buy.focus();
      await p.page.keyboard.press("Enter");
      assert.deepEqual((await api(server, "GET", `/v1/widget/orders?contactId=${id}`, partner.secretKey)).orders, [], "no order during the hold");
      assert.deepEqual(await screens(p.page), ["home", "amount", "signin", "twofactor", "setup", "review"]);

      if (variant === "light") {
        // A day later (the server's clock): back on the review, it looks again. The session has
        // idled out meanwhile, so sign in and the 2FA code; then Buy works.
        setClock(recoveredAt + HOLD_SECS + 60);
        await frame.getByRole("button", { name: "Change the amount" }).click();
        await heading(frame, "How much do you want to spend?");
        await frame.getByRole("button", { name: "Continue", exact: true }).click();
        await heading(frame, "Sign in");
        assert.equal(await frame.getByRole("alert").textContent(), "Your session expired. Sign in again.");
        await signIn(frame, email);
        await heading(frame, "Two-factor authentication");
        await frame.locator("#twofactor-code").fill(nextCode(key));
        await frame.getByRole("button", { name: "Verify", exact: true }).click();
        await heading(frame, "Your purchase");
        await frame.getByRole("button", { name: "Buy now", exact: true }).waitFor({ state: "visible" });
        assert.equal(await frame.locator("#hold-notice").count(), 0, "the hold has passed");
        assert.equal(await frame.getByRole("button", { name: "Buy now" }).getAttribute("aria-disabled"), null);
        await frame.getByRole("button", { name: "Buy now" }).click();
        await heading(frame, "Purchase complete");
        const orderId = await frame.locator("code#order-id").textContent();
        assert.equal((await api(server, "GET", `/v1/widget/orders/${orderId}`, partner.secretKey)).order.status, "completed");
      }
      await record(opened);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  }

  test("a lost authenticator, light theme: codes saved and downloaded, a recovery code in a fresh browser, the setup again, the hold on the review, then its end", T, () => lostAuthenticator("light"));
  test("the same in dark theme", T, () => lostAuthenticator("dark"));
  test("the same at 320 x 568: no sideways scroll", T, () => lostAuthenticator("320"));

  /**
   * 3 codes left (2FA turned on by the partner's API, 7 codes used through its verify): after the
   * 2FA code the review says so and offers new codes for an authenticator code; the new set is
   * shown once and the old one is dead.
   */
  async function fewLeft(variant) {
    const email = `few-${variant}@example.com`;
    const opened = await open(variant);
    const { p, frame } = opened;
    try {
      await start(frame, email);
      await heading(frame, "Your purchase");
      const id = await contactId(email);
      const created = await api(server, "GET", `/v1/auth/create2fa?contactId=${id}`, partner.secretKey);
      const key = created.details.manual;
      const enabled = await api(server, "POST", "/v1/auth/enable2fa", partner.secretKey, { token: nextCode(key), contactId: id });
      const old = enabled.details.recoveryCodes;
      assert.equal(old.length, 10);
      seen.codes.push(...old);
      for (const code of old.slice(0, 7)) {
        const answer = await api(server, "POST", "/v1/auth/verify2fa", partner.secretKey, { contactId: id, recoveryCode: code });
        assert.equal(answer.method, "recoveryCode");
      }
      assert.equal((await api(server, "GET", `/v1/auth/2fa?contactId=${id}`, partner.secretKey)).recoveryCodesRemaining, 3);

      // Buy asks for the 2FA code now; after it, the review says how many codes are left.
      await frame.getByRole("button", { name: "Buy now", exact: true }).click();
      await heading(frame, "Two-factor authentication");
      await frame.locator("#twofactor-code").fill(nextCode(key));
      await frame.getByRole("button", { name: "Verify", exact: true }).click();
      await heading(frame, "Your purchase");
      const left = frame.locator("#codes-left");
      await left.waitFor({ state: "visible" });
      assert.equal(await left.locator("p").textContent(), "You have 3 recovery codes left.");
      await look(opened, variant, "codes-left");
      await left.getByRole("button", { name: "Get new recovery codes" }).click();
      await heading(frame, "Get new recovery codes");
      assert.equal(await frame.locator("main h1").evaluate((h) => h === document.activeElement), true, "focus on the heading");
      await look(opened, variant, "newcodes");
      // Back to the review, and there again.
      await frame.getByRole("button", { name: "Back", exact: true }).click();
      await heading(frame, "Your purchase");
      await frame.getByRole("button", { name: "Get new recovery codes" }).click();
      await heading(frame, "Get new recovery codes");
      await frame.locator("#newcodes-code").fill(nextCode(key));
      await frame.getByRole("button", { name: "Get new codes", exact: true }).click();
      const fresh = await recoveryCodesShown(frame);
      seen.codes.push(...fresh);
      assert.equal(fresh.filter((c) => old.includes(c)).length, 0, "a new set");
      await look(opened, variant, "recovery-codes", false);
      await saveRecoveryCodes(frame);
      await heading(frame, "Your purchase");
      assert.equal(await frame.locator("#codes-left").count(), 0, "ten codes now: nothing said");
      assert.equal((await api(server, "GET", `/v1/auth/2fa?contactId=${id}`, partner.secretKey)).recoveryCodesRemaining, 10);
      // The old set is dead: an unused code of it no longer verifies.
      const response = await fetch(`${server.base}/v1/auth/verify2fa`, {
        method: "POST",
        headers: { Authorization: `Bearer ${partner.secretKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({ contactId: id, recoveryCode: old[9] }),
        signal: AbortSignal.timeout(WAIT),
      });
      assert.equal(response.status, 401);
      await response.arrayBuffer();
      assert.deepEqual(await screens(p.page), ["home", "amount", "signin", "review", "twofactor", "review", "twofactor", "review", "twofactor", "review"]);
      await record(opened);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  }

  test("3 recovery codes left, light theme: said after the 2FA code, new codes for an authenticator code, the old ones dead", T, () => fewLeft("light"));
  test("the same in dark theme", T, () => fewLeft("dark"));
  test("the same at 320 x 568", T, () => fewLeft("320"));

  test("no recovery code in a request URL, a message to the partner page, storage, the console or the server's log", () => {
    assert.equal(seen.codes.length, 10 * 2 * 3 + 10 * 2 * 3, "every code of the six runs was recorded");
    assert.ok(seen.urls.some((u) => u.endsWith("/v1/widget/session/2fa/verify")), "the requests were recorded");
    assert.ok(seen.messages.length === 9 && seen.messages.every((m) => m.includes('"screen"')), "the messages were recorded");
    assert.ok(server.log.length > 0, "the server's log was captured");
    const urls = seen.urls.join("\n");
    const messages = seen.messages.join("\n");
    const log = server.log.join("\n");
    const consoleText = seen.console.join("\n");
    for (const code of seen.codes) {
      for (const form of [code, code.replace(/-/g, ""), code.toLowerCase()]) {
        assert.ok(!urls.includes(form), `a recovery code in a request URL: ${form}`);
        assert.ok(!messages.includes(form), "a recovery code in a message to the partner page");
        assert.ok(!log.includes(form), "a recovery code in the server's log");
        assert.ok(!consoleText.includes(form), "a recovery code in the console");
      }
    }
    assert.ok(seen.storage.length >= 18, "the partner page and the widget frame of each page");
    for (const s of seen.storage) assert.deepEqual({ local: s.local, session: s.session, cookie: s.cookie }, { local: {}, session: {}, cookie: "" }, `storage of ${s.url}`);
  });
});
