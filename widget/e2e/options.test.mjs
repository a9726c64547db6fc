// The widget options (SPEC 6.3) as the person sees them in Chromium: one-screen checkout and
// "two of the three" (only the missing part asked, then the sandbox's sign-in, the partner's
// screen events exactly the page's), each option visibly applied (tokens, currencies, the server's amount and address
// errors next to their field, showRampartLogo, homeScreenMessage while loading, darkTheme with
// axe-core's color-contrast), and the production not_approved explanation under axe-core in
// both themes (with RAMPART_UPDATE_SCREENSHOTS=1: docs/widget/not-approved-<theme>.png).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  AXE_SOURCE,
  BTC_ADDRESS,
  ETH_ADDRESS,
  TEST_TIMEOUT,
  WAIT,
  cleanup,
  createPartner,
  events,
  heading,
  launchBrowser,
  maybeScreenshot,
  openPage,
  registerOrigins,
  render,
  sandboxSuite,
  seriousViolations,
  signIn,
  startPartnerSite,
  startServer,
  tempDir,
  waitForEvents,
  widgetFrame,
} from "./harness.mjs";

const T = { timeout: TEST_TIMEOUT };

/** The core's messages (core/src/widget/issue.rs, core/src/widget/address.rs). */
const AMOUNT_BELOW_MINIMUM = "amount is below the minimum purchase in the chosen currency.";
const BECH32_CHECKSUM = "The bech32 checksum does not match: the address is mistyped or corrupted.";
/** BTC_ADDRESS with its last character changed: a valid bech32 shape, a wrong checksum. */
const BTC_MISTYPED = BTC_ADDRESS.slice(0, -1) + (BTC_ADDRESS.endsWith("q") ? "p" : "q");
const DEFAULT_TAGLINE = "Buy crypto with your card or bank transfer in minutes.";

/** The screen names the partner's onEvent received, in order. */
async function screenEvents(page) {
  return (await events(page)).filter((e) => e.type === "screen").map((e) => e.payload.name);
}

/** Waits until the partner received `expected.length` screen events; asserts they are `expected`. */
async function expectScreens(page, expected) {
  await waitForEvents(page, (n) => partner.events.filter((e) => e.type === "screen").length >= n, expected.length);
  assert.deepEqual(await screenEvents(page), expected, "the partner's screen events are the page's screens");
}

/** The summary's terms and values, as text. */
function summaryRows(frame) {
  return frame.evaluate(() => [...document.querySelectorAll(".summary dt, .summary dd")].map((el) => el.textContent));
}

/** Editable form controls in the frame's main: inputs that are not read-only, selects, textareas. */
function editableControls(frame) {
  return frame.evaluate(() =>
    [...document.querySelectorAll("main input, main select, main textarea")]
      .filter((el) => !(el.tagName === "INPUT" && el.readOnly) && !el.disabled)
      .map((el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.type ? "[" + el.type + "]" : "")),
  );
}

/** axe-core's color-contrast rule alone, in `frame`: its violations (it must have run). */
async function contrastViolations(frame) {
  const loaded = await frame.evaluate(() => typeof window.axe === "object");
  if (!loaded) await frame.evaluate(AXE_SOURCE);
  const result = await frame.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: "rule", values: ["color-contrast"] } });
    return {
      ran: r.passes.concat(r.violations, r.incomplete).some((x) => x.id === "color-contrast"),
      passed: r.passes.some((x) => x.id === "color-contrast"),
      violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ") + ": " + n.failureSummary) })),
    };
  });
  assert.ok(result.ran && result.passed, "axe-core checked color-contrast on some element");
  return result.violations;
}

/** The frame's computed background colours (html and body) and the theme attribute. */
function look(frame) {
  return frame.evaluate(() => ({
    theme: document.documentElement.getAttribute("data-theme"),
    html: getComputedStyle(document.documentElement).backgroundColor,
    body: getComputedStyle(document.body).backgroundColor,
    text: getComputedStyle(document.body).color,
  }));
}

describe("widget options in Chromium (sandbox server)", () => {
  const suite = sandboxSuite("rampart-e2e-options-");
  let server, site, browser, partner;
  before(() => {
    ({ server, browser, partner } = suite);
    [site] = suite.sites;
  });

  /**
   * Opens the partner page and renders the widget with `options`. With `hold`, the frame's
   * `POST /v1/widget/check` requests wait until `release()` (bounded by the test's own waits),
   * so the loading home screen can be seen and the screen events are deterministic.
   */
  async function open(options, { hold = false, viewport = { width: 480, height: 700 } } = {}) {
    const p = await openPage(browser, { viewport });
    let release = () => {};
    if (hold) {
      const gate = new Promise((done) => (release = done));
      await p.context.route((url) => url.pathname === "/v1/widget/check", async (route) => {
        await Promise.race([gate, new Promise((done) => setTimeout(done, WAIT))]);
        await route.continue().catch(() => {});
      });
    }
    const close = async () => {
      release();
      await p.close();
    };
    try {
      await p.page.goto(site.url("partner.html", server), { waitUntil: "load" });
      const handle = await render(p.page, { targetContainerId: "buy", publicKey: partner.publicKey, clientName: "Acme Shop", ...options });
      assert.equal(handle.ok, true, JSON.stringify(handle));
      const { element, frame } = await widgetFrame(p.page, handle.url);
      return { p, handle, element, frame, release, close };
    } catch (error) {
      await close();
      throw error;
    }
  }

  /** Opens with a held check: waits for ready and the loading home screen, then releases it. */
  async function openHeld(options) {
    const w = await open(options, { hold: true });
    try {
      await expectScreens(w.p.page, ["home"]);
      await w.frame.locator("main .loading").waitFor({ state: "visible" });
      w.release();
      return w;
    } catch (error) {
      await w.close();
      throw error;
    }
  }

  // ---- B. one-screen checkout and "two of the three" ------------------------------------------

  test("B1. one token, its address and an amount: the frame opens on the summary (after sign-in), every part read-only", T, async () => {
    const w = await openHeld({ tokens: "btc", receiveAddress: { btc: BTC_ADDRESS }, amount: "25" });
    try {
      const { frame, p } = w;
      // The sandbox server takes orders: a person who is not signed in signs in first, and
      // nothing of the purchase is asked there.
      await heading(frame, "Sign in");
      for (const id of ["#amount", "#currency", "#address", "input[name=coin]"]) assert.equal(await frame.locator(id).count(), 0, `no ${id} at sign-in`);
      await signIn(frame, "b1@example.com");
      assert.equal(await heading(frame, "Your purchase"), "Your purchase");
      assert.deepEqual(await summaryRows(frame), ["Coin", "Bitcoin (BTC)", "Amount", "25 USD", "Receive address", BTC_ADDRESS]);
      assert.equal(await frame.locator("main p.muted").first().textContent(), "Set by Acme Shop.");
      // No editable input for any part: only the read-only link field, no "Change" control,
      // no coin radio, no amount, currency or address field.
      assert.deepEqual(await editableControls(frame), []);
      assert.equal(await frame.locator("main button.link").count(), 0, "no Change button");
      for (const id of ["#amount", "#currency", "#address", "input[name=coin]"]) assert.equal(await frame.locator(id).count(), 0, `no ${id}`);
      assert.equal(await frame.locator("#link").evaluate((el) => el.readOnly), true);
      assert.equal(await frame.getByRole("button", { name: "Back" }).count(), 0, "nothing to go back to");
      // The partner saw exactly what the page went through: home (loading), sign-in, then the
      // summary.
      await expectScreens(p.page, ["home", "signin", "review"]);
      const got = await events(p.page);
      assert.deepEqual(got.filter((e) => e.type !== "resize").map((e) => e.type), ["ready", "screen", "screen", "screen"]);
      p.assertClean(assert);
    } finally {
      await w.close();
    }
  });

  test("B2. token and amount, no address: only the address screen, then the summary", T, async () => {
    const w = await openHeld({ tokens: "eth", amount: "25" });
    try {
      const { frame, p } = w;
      assert.equal(await heading(frame, "Where should we send"), "Where should we send your Ether?");
      // Only the missing part is asked: the address field, nothing for the coin or the amount.
      assert.deepEqual(await editableControls(frame), ["input#address[text]"]);
      assert.equal(await frame.locator("#address").inputValue(), "");
      assert.equal(await frame.locator("main p.muted").textContent(), "Amount: 25 USD");
      assert.equal(await frame.getByRole("button", { name: "Back" }).count(), 0, "no earlier step to go back to");
      await frame.locator("#address").fill(ETH_ADDRESS);
      await frame.getByRole("button", { name: "Continue" }).click();
      await signIn(frame, "b2@example.com");
      await heading(frame, "Your purchase");
      assert.deepEqual(await summaryRows(frame), ["Coin", "Ether (ETH)", "Amount", "25 USD", "Receive address", ETH_ADDRESS + "Change"]);
      assert.deepEqual(
        await frame.locator("main button.link").evaluateAll((els) => els.map((el) => el.getAttribute("aria-label"))),
        ["Change the receive address"],
      );
      await expectScreens(p.page, ["home", "address", "signin", "review"]);
      // And back to the address (the only editable part), the events following the page; signed
      // in, Continue goes straight back to the summary.
      await frame.getByRole("button", { name: "Change the receive address" }).click();
      await heading(frame, "Where should we send");
      assert.equal(await frame.locator("#address").inputValue(), ETH_ADDRESS);
      await expectScreens(p.page, ["home", "address", "signin", "review", "address"]);
      await frame.getByRole("button", { name: "Continue" }).click();
      await heading(frame, "Your purchase");
      await expectScreens(p.page, ["home", "address", "signin", "review", "address", "review"]);
      p.assertClean(assert);
    } finally {
      await w.close();
    }
  });

  test("B3. token and address, no amount: only the amount screen, then the summary", T, async () => {
    const w = await openHeld({ tokens: "btc", receiveAddress: { btc: BTC_ADDRESS } });
    try {
      const { frame, p } = w;
      assert.equal(await heading(frame, "How much"), "How much do you want to spend?");
      assert.deepEqual(await editableControls(frame), ["input#amount[text]", "select#currency[select-one]"]);
      await frame.locator("#amount").fill("30");
      await frame.getByRole("button", { name: "Continue" }).click();
      await signIn(frame, "b3@example.com");
      await heading(frame, "Your purchase");
      assert.deepEqual(await summaryRows(frame), ["Coin", "Bitcoin (BTC)", "Amount", "30 USDChange", "Receive address", BTC_ADDRESS]);
      await expectScreens(p.page, ["home", "amount", "signin", "review"]);
      p.assertClean(assert);
    } finally {
      await w.close();
    }
  });

  // ---- A. each option visibly applied ----------------------------------------------------------

  test("A1. tokens \"eth,btc\": the coin screen offers exactly those two, in that order", T, async () => {
    const w = await openHeld({ tokens: "eth,btc" });
    try {
      const { frame, p } = w;
      await frame.getByRole("button", { name: "Start" }).click();
      await heading(frame, "Choose a coin");
      const coins = await frame.evaluate(() =>
        [...document.querySelectorAll("main input[name=coin]")].map((el) => [el.value, el.checked, document.querySelector(`label[for="${el.id}"] .coin-name`).textContent]),
      );
      assert.deepEqual(coins, [["eth", true, "Ether"], ["btc", false, "Bitcoin"]]);
      await expectScreens(p.page, ["home", "coin"]);
      p.assertClean(assert);
    } finally {
      await w.close();
    }
  });

  test("A1. tokens \"sol\": no coin screen, Start goes to the amount for Solana", T, async () => {
    const w = await openHeld({ tokens: "sol" });
    try {
      const { frame, p } = w;
      await frame.getByRole("button", { name: "Start" }).click();
      await heading(frame, "How much");
      assert.equal(await frame.locator("main p.muted").textContent(), "Coin: Solana (SOL)");
      assert.equal(await frame.locator("input[name=coin]").count(), 0);
      await expectScreens(p.page, ["home", "amount"]);
      // Back from the amount goes home, not to a coin screen.
      await frame.getByRole("button", { name: "Back" }).click();
      await heading(frame, "Acme Shop");
      await expectScreens(p.page, ["home", "amount", "home"]);
      p.assertClean(assert);
    } finally {
      await w.close();
    }
  });

  test("A2. currencies \"eur\": the amount screen is in EUR, with no currency to choose", T, async () => {
    const w = await openHeld({ tokens: "btc", currencies: "eur" });
    try {
      const { frame, p } = w;
      await frame.getByRole("button", { name: "Start" }).click();
      await heading(frame, "How much");
      assert.equal(await frame.locator("label[for=amount]").textContent(), "Amount (EUR)");
      assert.equal(await frame.locator("#currency").count(), 0, "no currency select");
      await frame.locator("#amount").fill("25");
      await frame.getByRole("button", { name: "Continue" }).click();
      await heading(frame, "Where should we send");
      assert.equal(await frame.locator("main p.muted").textContent(), "Amount: 25 EUR");
      p.assertClean(assert);
    } finally {
      await w.close();
    }
  });

  test("A3. an amount of 4 is refused with the server's minimum message next to the field", T, async () => {
    const w = await openHeld({ tokens: "btc" });
    try {
      const { frame, p } = w;
      await frame.getByRole("button", { name: "Start" }).click();
      await heading(frame, "How much");
      await frame.locator("#amount").fill("4");
      await frame.getByRole("button", { name: "Continue" }).click();
      await frame.locator("#amount-error").waitFor({ state: "visible" });
      assert.equal(await frame.locator("main h1").textContent(), "How much do you want to spend?", "still on the amount screen");
      const shown = await frame.evaluate(() => {
        const input = document.getElementById("amount");
        const error = document.getElementById("amount-error");
        return {
          items: [...error.querySelectorAll("li")].map((li) => li.textContent),
          path: error.querySelector("li code.path").textContent,
          invalid: input.getAttribute("aria-invalid"),
          describedby: input.getAttribute("aria-describedby"),
          nextToField: input.nextElementSibling === error,
          focused: document.activeElement === input,
        };
      });
      assert.deepEqual(shown, {
        items: [`amount: ${AMOUNT_BELOW_MINIMUM} (given: 4)`],
        path: "amount",
        invalid: "true",
        describedby: "amount-error",
        nextToField: true,
        focused: true,
      });
      assert.deepEqual(await screenEvents(p.page), ["home", "amount"], "no screen change on the refusal");
      p.assertClean(assert);
    } finally {
      await w.close();
    }
  });

  test("A4. a mistyped Bitcoin address: the bech32 checksum failure named next to the field", T, async () => {
    const w = await openHeld({ tokens: "btc", amount: "25" });
    try {
      const { frame, p } = w;
      await heading(frame, "Where should we send your Bitcoin?");
      await frame.locator("#address").fill(BTC_MISTYPED);
      await frame.getByRole("button", { name: "Continue" }).click();
      await frame.locator("#address-error").waitFor({ state: "visible" });
      const shown = await frame.evaluate(() => {
        const input = document.getElementById("address");
        const error = document.getElementById("address-error");
        return {
          items: [...error.querySelectorAll("li")].map((li) => li.textContent),
          invalid: input.getAttribute("aria-invalid"),
          describedby: input.getAttribute("aria-describedby"),
          nextToField: input.nextElementSibling === error,
          value: input.value,
        };
      });
      assert.deepEqual(shown, {
        items: [`receiveAddress.btc: ${BECH32_CHECKSUM} (given: ${BTC_MISTYPED})`],
        invalid: "true",
        describedby: "address-error",
        nextToField: true,
        value: BTC_MISTYPED,
      });
      // The right address goes through (to the sign-in, then the summary).
      await frame.locator("#address").fill(BTC_ADDRESS);
      await frame.getByRole("button", { name: "Continue" }).click();
      await signIn(frame, "a4@example.com");
      await heading(frame, "Your purchase");
      await expectScreens(p.page, ["home", "address", "signin", "review"]);
      p.assertClean(assert);
    } finally {
      await w.close();
    }
  });

  test("A5. showRampartLogo: the logo instead of \"Buy Crypto\" (and the text without it)", T, async () => {
    for (const logo of [true, false]) {
      const w = await openHeld(logo ? { showRampartLogo: true } : {});
      try {
        const { frame, p } = w;
        await frame.getByRole("button", { name: "Start" }).waitFor({ state: "visible" });
        const bar = await frame.evaluate(() => {
          const header = document.querySelector("header.bar");
          const mark = header.querySelector(".logo-mark");
          return {
            logo: header.querySelectorAll(".logo").length,
            logoText: header.querySelector(".logo") ? header.querySelector(".logo").textContent : null,
            markVisible: mark ? mark.getBoundingClientRect().width > 0 && mark.getBoundingClientRect().height > 0 : false,
            brand: header.querySelectorAll(".brand").length,
            says: /Buy Crypto/.test(header.textContent),
          };
        });
        assert.deepEqual(bar, logo
          ? { logo: 1, logoText: "Rampart", markVisible: true, brand: 0, says: false }
          : { logo: 0, logoText: null, markVisible: false, brand: 1, says: true });
        p.assertClean(assert);
      } finally {
        await w.close();
      }
    }
  });

  test("A6. homeScreenMessage: shown while the options load and on home once they are in", T, async () => {
    const message = "Welcome to Acme: <b>coins</b> & more";
    const w = await open({ homeScreenMessage: message }, { hold: true });
    try {
      const { frame, p } = w;
      await expectScreens(p.page, ["home"]);
      await frame.locator("main .loading").waitFor({ state: "visible" });
      // Loading (the check held): the message, the spinner's status, no Start yet.
      assert.equal(await frame.locator("main h1").textContent(), "Acme Shop");
      assert.equal(await frame.locator("main p.lead").textContent(), message);
      assert.equal(await frame.locator("main p.lead b").count(), 0, "shown as text");
      assert.equal(await frame.locator("main .loading").getAttribute("aria-busy"), "true");
      assert.equal(await frame.getByRole("button", { name: "Start" }).count(), 0);
      w.release();
      await frame.getByRole("button", { name: "Start" }).waitFor({ state: "visible" });
      assert.equal(await frame.locator("main p.lead").textContent(), message);
      assert.equal(await frame.locator("main .loading").count(), 0);
      assert.deepEqual(await screenEvents(p.page), ["home"]);
      p.assertClean(assert);
    } finally {
      await w.close();
    }
    // Without it: the core's default tagline.
    const d = await openHeld({});
    try {
      await d.frame.getByRole("button", { name: "Start" }).waitFor({ state: "visible" });
      assert.equal(await d.frame.locator("main p.lead").textContent(), DEFAULT_TAGLINE);
      d.p.assertClean(assert);
    } finally {
      await d.close();
    }
  });

  test("A7. darkTheme: data-theme dark, a dark background, axe-core color-contrast clean", T, async () => {
    const looks = {};
    for (const theme of ["light", "dark"]) {
      const w = await openHeld(theme === "dark" ? { darkTheme: true, tokens: "btc" } : { tokens: "btc" });
      try {
        const { frame, p } = w;
        await frame.getByRole("button", { name: "Start" }).waitFor({ state: "visible" });
        looks[theme] = await look(frame);
        assert.deepEqual(await contrastViolations(frame), [], `home (${theme}): color-contrast`);
        // The amount screen with the server's error (red text) as well.
        await frame.getByRole("button", { name: "Start" }).click();
        await heading(frame, "How much");
        await frame.locator("#amount").fill("4");
        await frame.getByRole("button", { name: "Continue" }).click();
        await frame.locator("#amount-error").waitFor({ state: "visible" });
        assert.deepEqual(await contrastViolations(frame), [], `amount-error (${theme}): color-contrast`);
        p.assertClean(assert);
      } finally {
        await w.close();
      }
    }
    assert.deepEqual(looks.light, { theme: null, html: "rgb(255, 255, 255)", body: "rgb(255, 255, 255)", text: looks.light.text });
    assert.deepEqual(looks.dark, { theme: "dark", html: "rgb(17, 20, 24)", body: "rgb(17, 20, 24)", text: looks.dark.text });
    assert.notEqual(looks.dark.body, looks.light.body, "the dark background differs from the light one");
    assert.notEqual(looks.dark.text, looks.light.text, "so does the text colour");
  });
});

describe("the not_approved explanation in Chromium (production server)", () => {
  let dir, production, httpsSite, browser, unapproved;

  before(async () => {
    dir = tempDir("rampart-e2e-options-prod-");
    httpsSite = await startPartnerSite({ https: true, dir });
    production = await startServer({
      dir,
      environment: "production",
      before: (db) => createPartner(db, "Waiting Shop", "production"),
    });
    unapproved = production.made;
    await registerOrigins(production, unapproved, [httpsSite.origin]);
    browser = await launchBrowser();
  });

  after(async () => {
    if (browser) await browser.close();
    if (httpsSite) await httpsSite.stop();
    if (production) await production.stop();
    cleanup(dir);
  });

  for (const theme of ["light", "dark"]) {
    test(`C. not approved (${theme}): axe-core finds no serious or critical violation`, T, async () => {
      const p = await openPage(browser, { https: true, viewport: { width: 480, height: 700 } });
      try {
        await p.page.goto(httpsSite.url("partner.html", production), { waitUntil: "load" });
        const handle = await render(p.page, { targetContainerId: "buy", publicKey: unapproved.publicKey, ...(theme === "dark" ? { darkTheme: true } : {}) });
        assert.equal(handle.ok, true);
        const { element, frame } = await widgetFrame(p.page, handle.url);
        const got = await waitForEvents(p.page, () => partner.events.length > 0);
        assert.deepEqual(got.map((e) => [e.type, e.payload.code]), [["error", "not_approved"]]);
        assert.equal(await heading(frame, "Not available yet"), "Not available yet");
        assert.equal(await frame.evaluate(() => document.documentElement.getAttribute("data-theme")), theme === "dark" ? "dark" : null);
        assert.deepEqual(await seriousViolations(frame), [], `not_approved (${theme}): axe-core`);
        assert.deepEqual(await contrastViolations(frame), [], `not_approved (${theme}): color-contrast`);
        await maybeScreenshot(element, `not-approved-${theme}`);
        p.assertClean(assert);
      } finally {
        await p.close();
      }
    });
  }
});
