// The widget page's screens in Chromium: keyboard only from home to the summary, axe-core on
// every screen reached in light and dark theme, the primary action visible without scrolling
// at 420 x 550, no horizontal scroll at 320 x 568. With RAMPART_UPDATE_SCREENSHOTS=1 (make
// widget-screenshots) each screen is written to docs/widget/<screen>-<theme>.png.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import {
  ETH_ADDRESS,
  TEST_TIMEOUT,
  api,
  heading,
  maybeScreenshot,
  openPage,
  render,
  sandboxSuite,
  seriousViolations,
  waitForEvents,
  widgetFrame,
} from "./harness.mjs";

const T = { timeout: TEST_TIMEOUT };

/** Presses Tab until the frame's focused element matches `selector` (at most `max` presses). */
async function tabTo(page, frame, selector, max = 12) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    const there = await frame.evaluate((s) => document.hasFocus() && !!document.activeElement && document.activeElement.matches(s), selector);
    if (there) return i + 1;
  }
  const at = await frame.evaluate(() => document.activeElement && document.activeElement.outerHTML.slice(0, 120));
  throw new Error(`Tab did not reach ${selector} in ${max} presses (focus on ${at})`);
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
  before(() => {
    ({ server, browser, partner } = suite);
    [site] = suite.sites;
  });

  /** Keyboard only, home -> coin -> amount (with an error first) -> address -> summary. On each
   * screen: axe (no serious or critical violation), the primary button visible, a screenshot. */
  async function walk(theme) {
    const dark = theme === "dark";
    const p = await openPage(browser, { viewport: { width: 480, height: 700 } });
    try {
      await p.page.goto(site.url("partner.html", server), { waitUntil: "load" });
      const options = { publicKey: partner.publicKey, clientName: "Acme Shop", ...(dark ? { darkTheme: true } : {}) };
      const handle = await render(p.page, { targetContainerId: "buy", ...options });
      const { element, frame } = await widgetFrame(p.page, handle.url);
      await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen"));
      assert.equal(await frame.evaluate(() => document.documentElement.getAttribute("data-theme")), dark ? "dark" : null);
      const reached = [];
      const arrive = async (screen, title) => {
        await heading(frame, title);
        reached.push(screen);
        const violations = await seriousViolations(frame);
        assert.deepEqual(violations, [], `${screen} (${theme}): axe-core finds no serious or critical violation`);
        await assertPrimaryVisible(frame, screen);
        await maybeScreenshot(element, `${screen}-${theme}`);
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
      reached.push("amount-error");
      assert.deepEqual(await seriousViolations(frame), [], `amount-error (${theme}): axe-core`);
      await assertPrimaryVisible(frame, "amount-error");
      await maybeScreenshot(element, `amount-error-${theme}`);
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

      await arrive("summary", "Your purchase");
      const summary = await frame.evaluate(() => [...document.querySelectorAll(".summary dt, .summary dd")].map((el) => el.textContent));
      assert.deepEqual(summary, ["Coin", "Ether (ETH)Change", "Amount", "25 EURChange", "Receive address", ETH_ADDRESS + "Change"]);
      const link = await frame.locator("#link").inputValue();
      const built = await api(server, "POST", "/v1/widget/url", partner.secretKey, {
        ...options,
        tokens: "eth",
        receiveAddress: { eth: ETH_ADDRESS },
        amount: "25",
        currencies: "eur",
      });
      assert.equal(link, built.url, "the summary's link is the canonical one-screen-checkout URL");
      const screens = (await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen" && e.payload.name === "summary")))
        .filter((e) => e.type === "screen")
        .map((e) => e.payload.name);
      assert.deepEqual(screens, ["home", "coin", "amount", "address", "summary"]);
      assert.deepEqual(reached, ["home", "coin", "amount", "amount-error", "address", "summary"]);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  }

  test("8, 9. keyboard only from home to the summary, axe-core and the primary action on each screen, light theme", T, () => walk("light"));
  test("8, 9. the same in dark theme", T, () => walk("dark"));

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
      await heading(frame, "Your purchase");
      await assertNoHorizontalScroll(frame, "summary", 320);
      await frame.getByRole("button", { name: "Change the coin" }).click();
      await heading(frame, "Choose a coin");
      // And home, reached back from the coin screen.
      await frame.getByRole("button", { name: "Back" }).click();
      await heading(frame, "A partner with");
      await assertNoHorizontalScroll(frame, "home", 320);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });
});
