// The widget page's screens in Chromium: keyboard only from home through the sign-in, the
// summary, the 2FA setup and the purchase to the confirmation, axe-core on every screen reached
// in light and dark theme, the primary action visible without scrolling at 420 x 550, no
// horizontal scroll at 320 x 568; the 2FA verify screen the same way. With
// RAMPART_UPDATE_SCREENSHOTS=1 (make widget-screenshots) each screen is written to
// docs/widget/<screen>-<theme>.png (and <screen>-320.png for the narrow run).
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import {
  ETH_ADDRESS,
  SANDBOX_BANNER,
  TEST_TIMEOUT,
  api,
  heading,
  maybeScreenshot,
  openPage,
  openWidget,
  recoveryCodesShown,
  render,
  sandboxSuite,
  seriousViolations,
  signIn,
  totpCode,
  waitForEvents,
  widgetFrame,
  wrongTotpCode,
} from "./harness.mjs";

const T = { timeout: TEST_TIMEOUT };

/** Presses Tab until the frame's focused element matches `selector` (and, when given, has the
 * text `text`), at most `max` presses. */
async function tabTo(page, frame, selector, max = 12, text = null) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    const there = await frame.evaluate(
      ([s, t]) => document.hasFocus() && !!document.activeElement && document.activeElement.matches(s) && (t === null || document.activeElement.textContent === t),
      [selector, text],
    );
    if (there) return i + 1;
  }
  const at = await frame.evaluate(() => document.activeElement && document.activeElement.outerHTML.slice(0, 120));
  throw new Error(`Tab did not reach ${selector}${text ? ` "${text}"` : ""} in ${max} presses (focus on ${at})`);
}

/** The confirmation's partner button (widgetText, widgetButtonURL), set for this file's partner. */
const BUTTON_TEXT = "Back to Acme Shop";
const BUTTON_URL = "https://shop.example.com/thanks";

/** Waits until the setup screen's QR code has loaded (decoded, with its size). */
async function qrLoaded(frame) {
  await frame.locator("img.qr").waitFor({ state: "visible" });
  await frame.waitForFunction(() => {
    const img = document.querySelector("img.qr");
    return !!img && img.complete && img.naturalWidth > 0;
  });
}

/** The manual key the setup screen shows (its groups of four joined). */
async function manualKey(frame) {
  return (await frame.locator("code#setup-key").textContent()).replace(/ /g, "");
}

/** The frame's focused element, described. */
function focused(frame) {
  return frame.evaluate(() => {
    const el = document.activeElement;
    return el ? el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + ":" + (el.textContent || "").trim().slice(0, 40) : "";
  });
}

/** At 420 x 550: the screen's primary button lies inside the frame's viewport, unscrolled. */
async function assertPrimaryVisible(frame, screen) {
  const box = await frame.evaluate(() => {
    const b = document.querySelector("main .primary");
    if (!b) return null;
    const r = b.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, height: innerHeight, width: innerWidth, scrollY };
  });
  assert.ok(box, `${screen}: a primary button`);
  assert.equal(box.scrollY, 0, `${screen}: not scrolled`);
  assert.deepEqual([box.width, box.height], [420, 550], `${screen}: the frame is 420 x 550`);
  assert.ok(box.top >= 0 && box.bottom <= box.height, `${screen}: the primary button (${box.top}-${box.bottom}) is within the ${box.height} px viewport`);
}

/** No horizontal scroll in the frame. */
async function assertNoHorizontalScroll(frame, screen, width) {
  const m = await frame.evaluate(() => ({
    doc: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
    body: [document.body.scrollWidth, document.body.clientWidth],
    inner: innerWidth,
  }));
  assert.ok(m.inner <= width, `${screen}: the frame (${m.inner} px) fits the ${width} px viewport`);
  assert.ok(m.doc[0] <= m.doc[1], `${screen}: document scrolls sideways (${m.doc})`);
  assert.ok(m.body[0] <= m.body[1], `${screen}: body scrolls sideways (${m.body})`);
}

describe("widget screens in Chromium (sandbox server)", () => {
  const suite = sandboxSuite("rampart-e2e-screens-");
  let server, site, browser, partner;
  before(async () => {
    ({ server, browser, partner } = suite);
    [site] = suite.sites;
    await api(server, "POST", "/v1/users/widgetText", partner.secretKey, { widgetText: BUTTON_TEXT });
    await api(server, "POST", "/v1/users/widgetButtonURL", partner.secretKey, { widgetButtonURL: BUTTON_URL });
  });

  /** Keyboard only, home -> coin -> amount (with an error first) -> address -> sign-in (email,
   * then the code from the sandbox banner) -> summary -> "Mark me as KYC passed" -> 2FA setup
   * -> summary -> Buy now -> confirmation. On each screen: axe (no serious or critical
   * violation), the primary button visible, a screenshot. */
  async function walk(theme) {
    const dark = theme === "dark";
    const email = `walk-${theme}@example.com`;
    const p = await openPage(browser, { viewport: { width: 480, height: 700 } });
    try {
      await p.page.goto(site.url("partner.html", server), { waitUntil: "load" });
      const options = { publicKey: partner.publicKey, clientName: "Acme Shop", ...(dark ? { darkTheme: true } : {}) };
      const handle = await render(p.page, { targetContainerId: "buy", ...options });
      const { element, frame } = await widgetFrame(p.page, handle.url);
      await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen"));
      assert.equal(await frame.evaluate(() => document.documentElement.getAttribute("data-theme")), dark ? "dark" : null);
      const reached = [];
      const check = async (screen) => {
        reached.push(screen);
        const violations = await seriousViolations(frame);
        assert.deepEqual(violations, [], `${screen} (${theme}): axe-core finds no serious or critical violation`);
        await assertPrimaryVisible(frame, screen);
        await maybeScreenshot(element, `${screen}-${theme}`);
      };
      const arrive = async (screen, title) => {
        await heading(frame, title);
        await check(screen);
      };

      await frame.getByRole("button", { name: "Start" }).waitFor({ state: "visible" });
      await arrive("home", "Acme Shop");
      await tabTo(p.page, frame, "button.primary");
      assert.equal(await focused(frame), "button:Start");
      await p.page.keyboard.press("Enter");

      await arrive("coin", "Choose a coin");
      assert.equal(await focused(frame), "h1:Choose a coin", "focus moves to the new screen's heading");
      await tabTo(p.page, frame, "input[type=radio]");
      assert.equal(await focused(frame), "input#coin-btc:");
      await p.page.keyboard.press("ArrowDown");
      await p.page.keyboard.press("ArrowDown");
      assert.equal(await frame.evaluate(() => document.querySelector("input[name=coin]:checked").value), "eth");
      await tabTo(p.page, frame, "button.primary");
      await p.page.keyboard.press("Enter");

      await arrive("amount", "How much do you want to spend?");
      await tabTo(p.page, frame, "input#amount");
      await p.page.keyboard.press("ControlOrMeta+A");
      await p.page.keyboard.type("1");
      await tabTo(p.page, frame, "button.primary");
      await p.page.keyboard.press("Enter");
      // The server's error under the field, linked, the field invalid and focused.
      await frame.locator("#amount-error").waitFor({ state: "visible" });
      assert.equal(await focused(frame), "input#amount:");
      const invalid = await frame.evaluate(() => {
        const input = document.getElementById("amount");
        return [input.getAttribute("aria-invalid"), input.getAttribute("aria-describedby"), document.getElementById("amount-error").textContent];
      });
      assert.deepEqual(invalid.slice(0, 2), ["true", "amount-error"]);
      assert.match(invalid[2], /^amount: /);
      await check("amount-error");
      await p.page.keyboard.press("ControlOrMeta+A");
      await p.page.keyboard.type("25");
      await tabTo(p.page, frame, "select#currency");
      await p.page.keyboard.press("ArrowDown");
      assert.equal(await frame.evaluate(() => document.getElementById("currency").value), "eur");
      await tabTo(p.page, frame, "button.primary");
      await p.page.keyboard.press("Enter");

      await arrive("address", "Where should we send your Ether?");
      await tabTo(p.page, frame, "input#address");
      await p.page.keyboard.type(ETH_ADDRESS);
      await tabTo(p.page, frame, "button.primary");
      await p.page.keyboard.press("Enter");

      // The sandbox server takes orders: sign in by email, the code shown in the sandbox banner.
      await arrive("signin", "Sign in");
      await tabTo(p.page, frame, "input#email");
      await p.page.keyboard.type(email);
      await p.page.keyboard.press("Enter");
      const banner = frame.locator("p.sandbox-code");
      await banner.waitFor({ state: "visible" });
      const [, signInCode] = SANDBOX_BANNER.exec(await banner.textContent());
      assert.equal(await focused(frame), "input#signin-code:", "focus moves to the code field");
      await check("signin-code");
      await p.page.keyboard.type(signInCode);
      await p.page.keyboard.press("Enter");

      await arrive("summary", "Your purchase");
      const summary = await frame.evaluate(() => [...document.querySelectorAll(".summary dt, .summary dd")].map((el) => el.textContent));
      assert.deepEqual(summary, ["Coin", "Ether (ETH)Change", "Amount", "25 EURChange", "Receive address", ETH_ADDRESS + "Change"]);
      assert.equal(await frame.locator("main .primary").textContent(), "Buy now");
      const link = await frame.locator("#link").inputValue();
      const built = await api(server, "POST", "/v1/widget/url", partner.secretKey, {
        ...options,
        tokens: "eth",
        receiveAddress: { eth: ETH_ADDRESS },
        amount: "25",
        currencies: "eur",
      });
      assert.equal(link, built.url, "the summary's link is the canonical one-screen-checkout URL");

      // KYC passed without 2FA: the setup (QR code and key) before any purchase.
      await tabTo(p.page, frame, "button.secondary", 20, "Mark me as KYC passed (sandbox)");
      await p.page.keyboard.press("Enter");
      await heading(frame, "Set up two-factor authentication");
      await qrLoaded(frame);
      await check("setup");
      const manual = await manualKey(frame);
      await tabTo(p.page, frame, "input#setup-code", 20);
      await p.page.keyboard.type(totpCode(manual));
      await p.page.keyboard.press("Enter");

      // The recovery codes, shown once: Continue waits for "I saved my recovery codes".
      await recoveryCodesShown(frame);
      await check("recovery-codes");
      assert.equal(await focused(frame), "h1:Save your recovery codes", "focus moves to the new screen's heading");
      await tabTo(p.page, frame, "input#codes-saved", 20);
      await p.page.keyboard.press("Space");
      assert.equal(await frame.locator("#codes-saved").isChecked(), true);
      await tabTo(p.page, frame, "button.primary", 20);
      assert.equal(await focused(frame), "button:Continue");
      await p.page.keyboard.press("Enter");

      await heading(frame, "Your purchase");
      await tabTo(p.page, frame, "button.primary", 20);
      assert.equal(await focused(frame), "button:Buy now");
      await p.page.keyboard.press("Enter");

      await arrive("confirmation", "Purchase complete");
      const button = await frame.locator("main a.button.primary").evaluate((a) => [a.textContent, a.getAttribute("href")]);
      assert.deepEqual(button, [BUTTON_TEXT, BUTTON_URL]);
      await tabTo(p.page, frame, "a.button.primary", 20);

      const screens = (await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen" && e.payload.name === "confirmation")))
        .filter((e) => e.type === "screen")
        .map((e) => e.payload.name);
      assert.deepEqual(screens, ["home", "coin", "amount", "address", "signin", "review", "setup", "review", "confirmation"]);
      assert.deepEqual(reached, ["home", "coin", "amount", "amount-error", "address", "signin", "signin-code", "summary", "setup", "recovery-codes", "confirmation"]);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  }

  test("8, 9. keyboard only from home to the confirmation, axe-core and the primary action on each screen, light theme", T, () => walk("light"));
  test("8, 9. the same in dark theme", T, () => walk("dark"));

  /**
   * The 2FA verify screen (`variant` light, dark or 320: 320 x 568, light): a contact signs in,
   * the partner turns 2FA on for it (`/v1/auth/create2fa`, `/v1/auth/enable2fa`), Buy now is
   * refused and the page asks for the code; axe, the primary button, a wrong code's error, then
   * the right code back to the summary.
   */
  async function verifyScreen(variant) {
    const narrow = variant === "320";
    const dark = variant === "dark";
    const email = `verify-${variant}@example.com`;
    const options = {
      publicKey: partner.publicKey,
      clientName: "Acme Shop",
      tokens: "eth",
      receiveAddress: { eth: ETH_ADDRESS },
      amount: "25",
      ...(dark ? { darkTheme: true } : {}),
    };
    const viewport = narrow ? { width: 320, height: 568 } : { width: 480, height: 700 };
    const { p, element, frame } = await openWidget(browser, site, server, options, { viewport });
    try {
      if (narrow) {
        await heading(frame, "Sign in");
        await assertNoHorizontalScroll(frame, "signin", 320);
        await maybeScreenshot(element, "signin-320");
      }
      await signIn(frame, email);
      await heading(frame, "Your purchase");
      const { contactId } = await api(server, "GET", `/v1/widget/contacts?email=${encodeURIComponent(email)}`, partner.secretKey);
      const created = await api(server, "GET", `/v1/auth/create2fa?contactId=${contactId}`, partner.secretKey);
      await api(server, "POST", "/v1/auth/enable2fa", partner.secretKey, { token: totpCode(created.details.manual), contactId });
      await frame.getByRole("button", { name: "Buy now" }).click();
      await heading(frame, "Two-factor authentication");
      const check = async (screen) => {
        if (narrow) {
          await assertNoHorizontalScroll(frame, screen, 320);
        } else {
          assert.deepEqual(await seriousViolations(frame), [], `${screen} (${variant}): axe-core`);
          await assertPrimaryVisible(frame, screen);
        }
        await maybeScreenshot(element, `${screen}-${variant}`);
      };
      await check("twofactor");
      await frame.locator("#twofactor-code").fill(wrongTotpCode(created.details.manual));
      await frame.getByRole("button", { name: "Verify" }).click();
      await frame.locator("#twofactor-code-error").waitFor({ state: "visible" });
      assert.equal(await frame.locator("#twofactor-code-error").textContent(), "Google 2FA failed");
      await check("twofactor-error");
      // The next step's code: the enabling code's step is used up.
      await frame.locator("#twofactor-code").fill(totpCode(created.details.manual, 1));
      await frame.getByRole("button", { name: "Verify" }).click();
      await heading(frame, "Your purchase");
      assert.equal(await frame.getByRole("button", { name: "Buy now" }).count(), 1);
      const screens = (await waitForEvents(p.page, () => partner.events.filter((e) => e.type === "screen").length >= 4))
        .filter((e) => e.type === "screen")
        .map((e) => e.payload.name);
      assert.deepEqual(screens, ["home", "signin", "review", "twofactor", "review"]);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  }

  test("10. the 2FA verify screen, light theme: axe-core, the primary action, a wrong code's error", T, () => verifyScreen("light"));
  test("10. the same in dark theme", T, () => verifyScreen("dark"));
  test("10. the same at 320 x 568: no sideways scroll", T, () => verifyScreen("320"));

  test("7. at 320 x 568 no screen scrolls sideways", T, async () => {
    const p = await openPage(browser, { viewport: { width: 320, height: 568 } });
    try {
      await p.page.goto(site.url("partner.html", server), { waitUntil: "load" });
      const handle = await render(p.page, {
        targetContainerId: "buy",
        publicKey: partner.publicKey,
        clientName: "A partner with a rather long name for a small screen",
      });
      const { element, frame } = await widgetFrame(p.page, handle.url);
      const box = await element.boundingBox();
      assert.ok(box.width <= 320, `the iframe shrinks to the page (${box.width} px)`);
      const narrow = async (screen) => {
        await assertNoHorizontalScroll(frame, screen, 320);
        await maybeScreenshot(element, `${screen}-320`);
      };
      await frame.getByRole("button", { name: "Start" }).click();
      await heading(frame, "Choose a coin");
      await assertNoHorizontalScroll(frame, "coin", 320);
      await frame.getByText("Ether", { exact: true }).click();
      await frame.getByRole("button", { name: "Continue" }).click();
      await heading(frame, "How much");
      await assertNoHorizontalScroll(frame, "amount", 320);
      await frame.locator("#amount").fill("1");
      await frame.getByRole("button", { name: "Continue" }).click();
      await frame.locator("#amount-error").waitFor({ state: "visible" });
      await assertNoHorizontalScroll(frame, "amount-error", 320);
      await frame.locator("#amount").fill("1000000");
      await frame.getByRole("button", { name: "Continue" }).click();
      await heading(frame, "Where should we send");
      await assertNoHorizontalScroll(frame, "address", 320);
      await frame.locator("#address").fill("0xnot-an-address-but-a-long-run-of-text-with-no-spaces-at-all-0000000000");
      await frame.getByRole("button", { name: "Continue" }).click();
      await frame.locator("#address-error").waitFor({ state: "visible" });
      await assertNoHorizontalScroll(frame, "address-error", 320);
      await frame.locator("#address").fill(ETH_ADDRESS);
      await frame.getByRole("button", { name: "Continue" }).click();
      // The sign-in: a long email, the code from the sandbox banner.
      await heading(frame, "Sign in");
      await frame.locator("#email").fill("a.rather.long.address.for.a.small.screen@subdomain.example.com");
      await frame.getByRole("button", { name: "Send code" }).click();
      await frame.locator("p.sandbox-code").waitFor({ state: "visible" });
      await narrow("signin-code");
      assert.equal(await frame.locator("p.sandbox-code code").evaluate((c) => c.getClientRects().length), 1, "the code on one line");
      const [, code] = SANDBOX_BANNER.exec(await frame.locator("p.sandbox-code").textContent());
      await frame.locator("#signin-code").fill(code);
      await frame.getByRole("button", { name: "Sign in" }).click();
      await heading(frame, "Your purchase");
      await narrow("summary");
      await frame.getByRole("button", { name: "Change the coin" }).click();
      await heading(frame, "Choose a coin");
      // And home, reached back from the coin screen.
      await frame.getByRole("button", { name: "Back" }).click();
      await heading(frame, "A partner with");
      await assertNoHorizontalScroll(frame, "home", 320);
      // Signed in, Start and Continue lead back to the summary with the same choices.
      await frame.getByRole("button", { name: "Start" }).click();
      for (const title of ["Choose a coin", "How much", "Where should we send"]) {
        await heading(frame, title);
        await frame.getByRole("button", { name: "Continue" }).click();
      }
      await heading(frame, "Your purchase");
      await frame.getByRole("button", { name: "Mark me as KYC passed (sandbox)" }).click();
      await heading(frame, "Set up two-factor authentication");
      await qrLoaded(frame);
      await narrow("setup");
      await frame.locator("#setup-code").fill(totpCode(await manualKey(frame)));
      await frame.getByRole("button", { name: "Turn on 2FA" }).click();
      await recoveryCodesShown(frame);
      await narrow("recovery-codes");
      await frame.getByLabel("I saved my recovery codes").check();
      await frame.getByRole("button", { name: "Continue", exact: true }).click();
      await heading(frame, "Your purchase");
      await frame.getByRole("button", { name: "Buy now" }).click();
      await heading(frame, "Purchase complete");
      await narrow("confirmation");
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });
});
