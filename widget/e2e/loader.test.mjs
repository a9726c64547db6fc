// The loader in Chromium against the real server (sandbox): the global and render's coded
// errors, the iframe's attributes against POST /v1/widget/url, which messages reach onEvent,
// escaping of hostile option text, secret keys refused before any request, and the npm module
// (@rampart/widget) bundled by esbuild into a partner's page giving the script's iframe.
import assert from "node:assert/strict";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { build } from "esbuild";
import {
  BTC_ADDRESS,
  ETH_ADDRESS,
  TEST_TIMEOUT,
  WIDGET_DIR,
  api,
  cleanup,
  events,
  heading,
  openPage,
  render,
  sandboxSuite,
  tempDir,
  waitForEvents,
  widgetFrame,
} from "./harness.mjs";

const T = { timeout: TEST_TIMEOUT };

/**
 * A partner's app bundled as partners do: @rampart/widget (the committed dist/npm) installed in
 * a fresh project's node_modules, an app importing it, esbuild. The app hands `render` to
 * fixtures/partner.js (as `partner.api`), which the test drives.
 */
async function npmBundle() {
  const dir = tempDir("rampart-e2e-npm-");
  try {
    cpSync(join(WIDGET_DIR, "dist", "npm"), join(dir, "node_modules", "@rampart", "widget"), { recursive: true });
    writeFileSync(join(dir, "app.js"), 'import { render, RampartWidgetError } from "@rampart/widget";\nwindow.partner.api = { render, RampartWidgetError };\n');
    const result = await build({ absWorkingDir: dir, entryPoints: ["app.js"], bundle: true, format: "iife", platform: "browser", target: "es2019", minify: true, write: false, logLevel: "warning" });
    return result.outputFiles[0].text;
  } finally {
    cleanup(dir);
  }
}

/** An iframe element's attributes. */
function attributes(element) {
  return element.evaluate((f) => Object.fromEntries([...f.attributes].map((a) => [a.name, a.value])));
}

describe("loader in Chromium (sandbox server)", () => {
  const suite = sandboxSuite("rampart-e2e-loader-", { sites: 2 });
  let server, site, thirdSite, browser, partner;
  before(() => {
    ({ server, browser, partner } = suite);
    [site, thirdSite] = suite.sites;
  });

  test("1. loaded twice: one global; a second render into one container and an absent container are coded errors", T, async () => {
    const p = await openPage(browser);
    try {
      await p.page.goto(site.url("twice.html", server), { waitUntil: "load" });
      const globals = await p.page.evaluate(() => ({
        added: Object.getOwnPropertyNames(window).filter((n) => partner.globalsBefore.indexOf(n) < 0).sort(),
        same: partner.first === window.Rampart,
        frozen: Object.isFrozen(window.Rampart),
        keys: Object.keys(window.Rampart).sort(),
      }));
      assert.deepEqual(globals, { added: ["Rampart", "partner"], same: true, frozen: true, keys: ["RampartWidgetError", "render"] });
      const loaderLoads = p.seen.requests.filter((u) => u === server.loader).length;
      assert.ok(loaderLoads >= 1 && loaderLoads <= 2, `the loader was requested ${loaderLoads} times`);

      // No such element: container_missing, and nothing is created.
      const missing = await render(p.page, { targetContainerId: "no-such-element", publicKey: partner.publicKey });
      assert.deepEqual(missing, {
        ok: false,
        name: "RampartWidgetError",
        code: "container_missing",
        path: "targetContainerId",
        message: "No element has the id in targetContainerId.",
        rampartError: true,
        iframes: 0,
      });

      // No targetContainerId at all: the same code.
      const none = await render(p.page, { publicKey: partner.publicKey });
      assert.deepEqual([none.code, none.path, none.message, none.iframes], ["container_missing", "targetContainerId", "targetContainerId is required.", 0]);

      const first = await render(p.page, { targetContainerId: "buy", publicKey: partner.publicKey, clientName: "Acme" });
      assert.equal(first.ok, true);
      const again = await render(p.page, { targetContainerId: "buy", publicKey: partner.publicKey, clientName: "Other" });
      assert.deepEqual(again, {
        ok: false,
        name: "RampartWidgetError",
        code: "container_in_use",
        path: "targetContainerId",
        message: "A widget is already rendered in this container: close its handle first.",
        rampartError: true,
        iframes: 1,
      });
      // The first widget works, and greets once: one ready, not one per copy of the script.
      const got = await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen"));
      assert.equal(got.filter((e) => e.type === "ready").length, 1);
      assert.deepEqual(got[0], { container: "buy", keys: ["instanceId", "payload", "type"], type: "ready", payload: { url: first.url }, instanceId: first.instanceId });
      assert.equal(await p.page.locator("#buy iframe").count(), 1);

      // close() frees the container: a new render goes in.
      await p.page.evaluate(() => partner.handles.buy.close());
      assert.equal(await p.page.locator("iframe").count(), 0);
      const third = await render(p.page, { targetContainerId: "buy", publicKey: partner.publicKey });
      assert.equal(third.ok, true);
      assert.equal(await p.page.locator("#buy iframe").count(), 1);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("2. iframe attributes; src byte-equal to POST /v1/widget/url for the same options, and to ready's url", T, async () => {
    const options = {
      publicKey: partner.publicKey,
      clientName: "Café \"Ünïcode\" & Co / 100% ~ok",
      tokens: "btc,eth",
      homeScreenMessage: "Buy with card: fast, safe & simple?",
      receiveAddress: { eth: ETH_ADDRESS, btc: BTC_ADDRESS },
      currencies: "eur",
      amount: "50",
      darkTheme: true,
      showRampartLogo: true,
    };
    const built = await api(server, "POST", "/v1/widget/url", partner.secretKey, options);
    const p = await openPage(browser);
    try {
      await p.page.goto(site.url("partner.html", server), { waitUntil: "load" });
      const handle = await render(p.page, { targetContainerId: "buy", ...options });
      assert.equal(handle.ok, true);
      assert.equal(handle.url, built.url, "handle.url is the server's canonical URL");
      const { element } = await widgetFrame(p.page, handle.url);
      const attrs = await element.evaluate((f) => {
        const out = {};
        for (const a of f.attributes) out[a.name] = a.value;
        const style = getComputedStyle(f);
        return { attrs: out, maxWidth: f.style.maxWidth, border: style.borderTopWidth, rect: [f.getBoundingClientRect().width, f.getBoundingClientRect().height] };
      });
      assert.deepEqual(attrs.attrs, {
        src: built.url,
        width: "420",
        height: "550",
        title: "Café \"Ünïcode\" & Co / 100% ~ok purchase widget",
        allow: "payment; camera; microphone; clipboard-write",
        referrerpolicy: "strict-origin-when-cross-origin",
        style: "border: 0px; max-width: 100%;",
      });
      assert.equal(attrs.maxWidth, "100%");
      assert.equal(attrs.border, "0px");
      assert.deepEqual(attrs.rect, [420, 550]);
      const got = await waitForEvents(p.page, () => partner.events.some((e) => e.type === "ready"));
      assert.equal(got[0].type, "ready");
      assert.equal(got[0].payload.url, built.url, "ready echoes the URL byte for byte");
      // The default title without a clientName, and sizes given.
      const plain = await render(p.page, { targetContainerId: "buy2", publicKey: partner.publicKey, width: 300, height: 400 });
      const second = await widgetFrame(p.page, plain.url);
      assert.deepEqual(await second.element.evaluate((f) => [f.title, f.width, f.height]), ["Rampart purchase widget", "300", "400"]);
      const plainBuilt = await api(server, "POST", "/v1/widget/url", partner.secretKey, { publicKey: partner.publicKey });
      assert.equal(plain.url, plainBuilt.url);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("4. only the own iframe's envelopes reach onEvent; two widgets each see their own", T, async () => {
    const p = await openPage(browser);
    try {
      await p.page.goto(site.url("partner.html", server), { waitUntil: "load" });
      const one = await render(p.page, { targetContainerId: "buy", publicKey: partner.publicKey, clientName: "One" });
      const two = await render(p.page, { targetContainerId: "buy2", publicKey: partner.publicKey, clientName: "Two" });
      assert.ok(one.ok && two.ok);
      assert.notEqual(one.instanceId, two.instanceId);
      await waitForEvents(p.page, () => ["buy", "buy2"].every((c) => partner.events.some((e) => e.container === c && e.type === "screen")));
      const { frame } = await widgetFrame(p.page, one.url);
      await heading(frame, "One");

      // A third origin's frame posts forged envelopes with widget one's instanceId.
      await p.page.evaluate((src) => {
        const f = document.createElement("iframe");
        f.src = src;
        document.body.appendChild(f);
      }, thirdSite.url("forger.html", server, { instanceId: one.instanceId }));
      await p.page.waitForFunction(() => partner.raw.some((m) => m.data && m.data.forgerDone), null, { polling: 50 });
      const forged = await p.page.evaluate(() => partner.raw.filter((m) => m.data && m.data.source === "rampart-widget" && m.data.seq >= 1000));
      assert.equal(forged.length, 6);
      assert.ok(forged.every((m) => m.origin === thirdSite.origin), "the forger's messages arrived, from its own origin");

      // The partner window posts one to itself.
      await p.page.evaluate((id) => {
        window.postMessage({ source: "rampart-widget", version: 1, type: "screen", instanceId: id, seq: 2000, payload: { name: "self-forged" } }, "*");
        window.postMessage({ selfDone: true }, "*");
      }, one.instanceId);
      await p.page.waitForFunction(() => partner.raw.some((m) => m.data && m.data.selfDone), null, { polling: 50 });

      // Widget one's real frame (right window, right origin) posts what the loader must drop,
      // then one valid envelope: it arrives after all of them (one sender, one order).
      await frame.evaluate(([id, target]) => {
        const post = (m) => window.parent.postMessage(m, target);
        const base = (type, seq, payload) => ({ source: "rampart-widget", version: 1, type, instanceId: id, seq, payload });
        post({ ...base("screen", 3000, { name: "version-2" }), version: 2 });
        post({ ...base("screen", 3001, { name: "version-string" }), version: "1" });
        post(base("order.refunded", 3002, { name: "unknown-type" }));
        post(base("hello", 3003, {}));
        post({ ...base("screen", 3004, { name: "other-instance" }), instanceId: "0".repeat(32) });
        post({ ...base("screen", 3005, { name: "other-source" }), source: "someone-else" });
        post(base("screen", 3006, "not an object"));
        post(base("screen", 3007.5, { name: "fractional-seq" }));
        post("a string");
        post(null);
        post([1, 2, 3]);
        post(base("screen", 5000, { name: "probe" }));
        post(base("screen", 4999, { name: "replayed-seq" }));
        post(base("screen", 5000, { name: "same-seq" }));
        post(base("screen", 5001, { name: "after" }));
      }, [one.instanceId, site.origin]);
      const got = await waitForEvents(p.page, () => partner.events.some((e) => e.payload && e.payload.name === "after"));

      const names = got.filter((e) => e.type === "screen").map((e) => e.container + ":" + e.payload.name);
      assert.deepEqual(names.filter((n) => !/:home$/.test(n)), ["buy:probe", "buy:after"], "only the valid envelopes of the real frame passed");
      for (const [container, handle] of [["buy", one], ["buy2", two]]) {
        const mine = got.filter((e) => e.container === container);
        assert.ok(mine.every((e) => e.instanceId === handle.instanceId), `${container}: only its own instanceId`);
        assert.deepEqual(mine.filter((e) => e.type === "ready").map((e) => e.payload), [{ url: handle.url }]);
        assert.deepEqual(mine.filter((e) => e.type === "screen").map((e) => e.payload.name).slice(0, 1), ["home"]);
        assert.ok(mine.every((e) => ["ready", "screen", "resize"].includes(e.type)), `${container}: ${JSON.stringify(mine)}`);
      }
      // Every envelope the partner window received from a widget came from the widget origin.
      const fromWidget = await p.page.evaluate((o) => partner.raw.filter((m) => m.origin === o).map((m) => m.data && m.data.instanceId), server.base);
      assert.ok(fromWidget.length >= 4);
      // Nothing the forgers sent had an effect: no fallback link, both frames shown.
      assert.equal(await p.page.locator("#buy a, #buy2 a").count(), 0);
      assert.deepEqual(await p.page.evaluate(() => [...document.querySelectorAll("#buy iframe, #buy2 iframe")].map((f) => f.style.display)), ["", ""]);
      assert.deepEqual(await p.page.evaluate(() => partner.errors), []);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("5. hostile option text is shown as text: no dialog, no element, no request", T, async () => {
    const clientName = 'Acme "Shop" </script><img src=x onerror=alert(1)>';
    const homeScreenMessage = '<img src=x onerror=alert(2)> "quoted" </script><script>alert(3)</script>';
    const p = await openPage(browser);
    try {
      await p.page.goto(site.url("partner.html", server), { waitUntil: "load" });
      const handle = await render(p.page, { targetContainerId: "buy", publicKey: partner.publicKey, clientName, homeScreenMessage });
      assert.equal(handle.ok, true);
      const built = await api(server, "POST", "/v1/widget/url", partner.secretKey, { publicKey: partner.publicKey, clientName, homeScreenMessage });
      assert.equal(handle.url, built.url);
      const { element, frame } = await widgetFrame(p.page, handle.url);
      await waitForEvents(p.page, () => partner.events.some((e) => e.type === "ready"));
      assert.equal(await element.getAttribute("title"), clientName + " purchase widget");
      assert.equal(await heading(frame, "Acme"), clientName);
      assert.equal(await frame.locator("main .lead").textContent(), homeScreenMessage);
      assert.equal(await frame.title(), clientName + ": buy crypto");
      // The page goes on as with any name: the core takes the text, Start is offered.
      await frame.getByRole("button", { name: "Start" }).waitFor({ state: "visible" });
      const elements = await frame.evaluate(() => ({
        img: document.querySelectorAll("img").length,
        scripts: [...document.querySelectorAll("script")].map((s) => s.getAttribute("src")),
      }));
      assert.deepEqual(elements, { img: 0, scripts: ["page.js"] });
      assert.equal(await p.page.locator("img").count(), 0);
      assert.deepEqual(p.seen.requests.filter((u) => /\/x(\?|$)/.test(u)), [], "no request for the injected image");
      assert.deepEqual(await p.page.evaluate(() => partner.errors), []);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("6. a secret key is refused before any request and appears nowhere", T, async () => {
    const secret = partner.secretKey;
    const p = await openPage(browser);
    try {
      await p.page.goto(site.url("partner.html", server), { waitUntil: "load" });
      const toWidget = () => p.seen.requests.filter((u) => u.startsWith(server.base + "/"));
      assert.deepEqual(toWidget(), [server.loader], "before any render: the loader only");
      const cases = [
        [{ publicKey: secret }, "publicKey"],
        [{ apiKey: secret }, "apiKey"],
        [{ publicKey: partner.publicKey, clientName: "Shop " + secret }, "clientName"],
        [{ publicKey: partner.publicKey, receiveAddress: { btc: secret } }, "receiveAddress.btc"],
      ];
      for (const [options, path] of cases) {
        const result = await render(p.page, { targetContainerId: "buy", ...options });
        assert.equal(result.ok, false);
        assert.deepEqual([result.code, result.path, result.rampartError, result.iframes], ["secret_key", path, true, 0]);
        assert.ok(!result.message.includes(secret) && !result.message.includes(secret.slice(11)), "the message does not hold the key");
      }
      assert.deepEqual(toWidget(), [server.loader], "no request to the widget server after the refused renders");
      assert.equal(await p.page.locator("iframe").count(), 0);
      assert.deepEqual(await events(p.page), []);
      const everything = JSON.stringify([p.seen.requests, p.seen.console, await p.page.evaluate(() => partner.raw)]);
      assert.ok(!everything.includes(secret.slice(11)), "the key is in no URL, console line or message");
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("7. the npm module in a partner's esbuild bundle: no global, the script loader's iframe, ready", T, async () => {
    site.put("npm-bundle.js", await npmBundle());
    const options = {
      publicKey: partner.publicKey,
      clientName: "Acme Shop",
      tokens: "btc,eth",
      receiveAddress: { btc: BTC_ADDRESS },
      currencies: "eur",
      amount: "50",
      darkTheme: true,
    };
    const built = await api(server, "POST", "/v1/widget/url", partner.secretKey, options);
    // The script loader, for the same options.
    const s = await openPage(browser);
    let scriptFrame;
    try {
      await s.page.goto(site.url("partner.html", server), { waitUntil: "load" });
      const handle = await render(s.page, { targetContainerId: "buy", ...options });
      assert.equal(handle.url, built.url);
      scriptFrame = await attributes((await widgetFrame(s.page, handle.url)).element);
    } finally {
      await s.close();
    }
    const p = await openPage(browser);
    try {
      await p.page.goto(site.url("npm-partner.html", server), { waitUntil: "load" });
      const added = await p.page.evaluate(() => Object.getOwnPropertyNames(window).filter((n) => partner.globalsBefore.indexOf(n) < 0));
      assert.deepEqual(added, ["partner"], "the bundle defines no global");
      const handle = await render(p.page, { targetContainerId: "buy", widgetServer: server.base, ...options });
      assert.equal(handle.ok, true, JSON.stringify(handle));
      assert.equal(handle.url, built.url, "the canonical URL, without widgetServer");
      const { element } = await widgetFrame(p.page, handle.url);
      assert.deepEqual(await attributes(element), scriptFrame, "the same iframe as the script loader's");
      const got = await waitForEvents(p.page, () => partner.events.some((e) => e.type === "ready"));
      assert.deepEqual(got.find((e) => e.type === "ready"), {
        container: "buy",
        keys: ["instanceId", "payload", "type"],
        type: "ready",
        payload: { url: built.url },
        instanceId: handle.instanceId,
      });
      // The module's own check, thrown as the bundle's RampartWidgetError.
      const wrong = await render(p.page, { targetContainerId: "buy2", publicKey: partner.publicKey, widgetServer: server.base + "/widget/" });
      assert.deepEqual([wrong.code, wrong.path, wrong.rampartError, wrong.iframes], ["option_invalid", "widgetServer", true, 1]);
      assert.deepEqual(p.seen.requests.filter((u) => u.endsWith("/rampart.js")), [], "no loader script requested");
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });
});
