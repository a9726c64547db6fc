// Who may embed the widget (SPEC 6.2), in Chromium: a registered origin gets the first screen
// and `ready`; an unregistered one in production gets no widget, an error event and the
// fallback link; an unapproved production widget says so and the loader reports not_approved.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  TEST_TIMEOUT,
  cleanup,
  cli,
  createPartner,
  events,
  heading,
  launchBrowser,
  openPage,
  registerOrigins,
  render,
  startPartnerSite,
  startServer,
  tempDir,
  waitForEvents,
  widgetFrame,
} from "./harness.mjs";

const T = { timeout: TEST_TIMEOUT };
const LOADER_MESSAGES = {
  frame_blocked: "The widget page refused to load in this page: register this origin in widgetOrigins.",
  timeout: "The widget did not get ready within 10 seconds.",
};

/** The fallback link the loader leaves in `container`. */
async function fallbackLink(page, container) {
  return page.evaluate((c) => [...document.querySelectorAll(`#${c} a`)].map((a) => ({
    href: a.getAttribute("href"),
    target: a.getAttribute("target"),
    rel: a.getAttribute("rel"),
    text: a.textContent,
  })), container);
}

describe("embedding in Chromium", () => {
  let dir, sandbox, production, browser, registeredSite, plainSite, httpsSite;
  let sandboxPartner, unregisteredSandbox, approved, unapproved;

  before(async () => {
    dir = tempDir("rampart-e2e-embed-");
    // 127.0.0.2 is not one of sandbox's always-allowed local origins (localhost and 127.0.0.1
    // are): only its registration lets it embed the sandbox widget.
    registeredSite = await startPartnerSite({ host: "127.0.0.2" });
    plainSite = await startPartnerSite();
    httpsSite = await startPartnerSite({ https: true, dir });
    sandbox = await startServer({ dir, before: (db) => [createPartner(db, "Acme Shop"), createPartner(db, "Other Shop")] });
    [sandboxPartner, unregisteredSandbox] = sandbox.made;
    await registerOrigins(sandbox, sandboxPartner, [registeredSite.origin]);
    production = await startServer({
      dir,
      environment: "production",
      before: (db) => {
        const yes = createPartner(db, "Approved Shop", "production");
        const no = createPartner(db, "Waiting Shop", "production");
        const done = cli(["partner", "approve-widget", "--db", db, "--partner", yes.superuserId, "--environment", "production"]);
        assert.equal(done.widgetApproved, true);
        return { yes, no };
      },
    });
    ({ yes: approved, no: unapproved } = production.made);
    // Production takes https origins only: the approved partner registers another site's, the
    // unapproved one the https partner page's.
    await registerOrigins(production, approved, ["https://shop.example.com"]);
    await registerOrigins(production, unapproved, [httpsSite.origin]);
    browser = await launchBrowser();
  });

  after(async () => {
    if (browser) await browser.close();
    for (const site of [registeredSite, plainSite, httpsSite]) if (site) await site.stop();
    for (const server of [sandbox, production]) if (server) await server.stop();
    cleanup(dir);
  });

  test("3a. registered origin: the first screen shows and onEvent gets ready with the iframe's src", T, async () => {
    const p = await openPage(browser);
    try {
      await p.page.goto(registeredSite.url("partner.html", sandbox), { waitUntil: "load" });
      const handle = await render(p.page, { targetContainerId: "buy", publicKey: sandboxPartner.publicKey });
      assert.equal(handle.ok, true);
      const { element, frame } = await widgetFrame(p.page, handle.url);
      const got = await waitForEvents(p.page, () => partner.events.some((e) => e.type === "screen"));
      const src = await element.getAttribute("src");
      assert.equal(src, handle.url);
      assert.deepEqual(got.slice(0, 2), [
        { container: "buy", keys: ["instanceId", "payload", "type"], type: "ready", payload: { url: src }, instanceId: handle.instanceId },
        { container: "buy", keys: ["instanceId", "payload", "type"], type: "screen", payload: { name: "home" }, instanceId: handle.instanceId },
      ]);
      for (const e of got.slice(2)) {
        assert.equal(e.type, "resize");
        assert.ok(Number.isInteger(e.payload.height) && e.payload.height > 0);
      }
      assert.equal(await heading(frame, "Acme Shop"), "Acme Shop");
      await frame.getByRole("button", { name: "Start" }).waitFor({ state: "visible" });
      assert.equal(await frame.locator(".badge").textContent(), "Sandbox");
      assert.deepEqual(await fallbackLink(p.page, "buy"), []);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("3b. the same origin, unregistered, in sandbox: blocked (only localhost and 127.0.0.1 are free)", T, async () => {
    const p = await openPage(browser);
    try {
      await p.page.goto(registeredSite.url("partner.html", sandbox), { waitUntil: "load" });
      const handle = await render(p.page, { targetContainerId: "buy", publicKey: unregisteredSandbox.publicKey });
      const got = await waitForEvents(p.page, () => partner.events.length > 0, undefined, 11000);
      assert.deepEqual(got.map((e) => [e.type, e.payload.code]), [["error", "frame_blocked"]]);
      assert.deepEqual(await fallbackLink(p.page, "buy"), [{ href: handle.url, target: "_blank", rel: "noopener", text: "Open the Rampart widget" }]);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("3c. unregistered origin in production: no widget, frame_blocked (or timeout) within 10 s, the fallback link", T, async () => {
    const p = await openPage(browser);
    try {
      await p.page.goto(plainSite.url("partner.html", production), { waitUntil: "load" });
      const started = Date.now();
      const handle = await render(p.page, { targetContainerId: "buy", publicKey: approved.publicKey, clientName: "Approved" });
      assert.equal(handle.ok, true);
      const got = await waitForEvents(p.page, () => partner.events.length > 0, undefined, 11000);
      const elapsed = Date.now() - started;
      assert.ok(elapsed <= 10500, `the error came after ${elapsed} ms`);
      assert.equal(got.length, 1);
      const [event] = got;
      assert.equal(event.type, "error");
      assert.ok(event.payload.code === "frame_blocked" || event.payload.code === "timeout", event.payload.code);
      assert.deepEqual(event.payload, { code: event.payload.code, message: LOADER_MESSAGES[event.payload.code] });
      assert.equal(event.instanceId, handle.instanceId);
      assert.deepEqual(await fallbackLink(p.page, "buy"), [{ href: handle.url, target: "_blank", rel: "noopener", text: "Open the Rampart widget" }]);
      // The browser refused the page (frame-ancestors): nothing of the widget runs in the frame.
      const { element, frame } = await widgetFrame(p.page, handle.url);
      assert.ok(!frame.url().startsWith(production.base), `the frame shows ${frame.url()}`);
      if (event.payload.code === "frame_blocked") assert.equal(await element.evaluate((f) => f.style.display), "none");
      assert.ok(p.seen.requests.some((u) => u.startsWith(production.base + "/widget/?")), "the page was asked for");
      assert.ok(!p.seen.requests.some((u) => u.startsWith(production.base + "/widget/page.js")), "its script never loaded");
      // Nothing more arrives (the ready timer is stopped after the failure).
      assert.equal((await events(p.page)).length, 1);
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });

  test("3d. production widget not approved: not_approved event, the explanation in the frame", T, async () => {
    const p = await openPage(browser, { https: true });
    try {
      await p.page.goto(httpsSite.url("partner.html", production), { waitUntil: "load" });
      const handle = await render(p.page, { targetContainerId: "buy", publicKey: unapproved.publicKey });
      assert.equal(handle.ok, true);
      const { element, frame } = await widgetFrame(p.page, handle.url);
      const got = await waitForEvents(p.page, () => partner.events.length > 0);
      assert.deepEqual(got, [
        {
          container: "buy",
          keys: ["instanceId", "payload", "type"],
          type: "error",
          payload: { code: "not_approved", message: "This widget is not approved for production yet." },
          instanceId: handle.instanceId,
        },
      ]);
      assert.equal(await heading(frame, "Not available yet"), "Not available yet");
      assert.match(await frame.locator("main").innerText(), /the operator has not approved it yet/);
      // The frame stays (it explains); the link is there too.
      assert.equal(await element.evaluate((f) => f.style.display), "");
      assert.deepEqual(await fallbackLink(p.page, "buy"), [{ href: handle.url, target: "_blank", rel: "noopener", text: "Open the Rampart widget" }]);
      assert.equal(await frame.locator(".badge").count(), 0, "no sandbox badge in production");
      assert.equal((await events(p.page)).length, 1, "nothing after the error");
      p.assertClean(assert);
    } finally {
      await p.close();
    }
  });
});
