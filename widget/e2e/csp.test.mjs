// A partner page with a strict, nonce-based Content-Security-Policy built from the server's own
// snippet helper (SPEC 6.1, issue scenario 12): the widget works with zero
// `securitypolicyviolation` events and only local requests. And a page whose CSP refuses the
// widget's frame gets `csp_blocked` and the fallback link instead of a blank box.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import {
  TEST_TIMEOUT,
  api,
  cleanup,
  createPartner,
  heading,
  launchBrowser,
  openPage,
  startServer,
  tempDir,
} from "./harness.mjs";

const T = { timeout: TEST_TIMEOUT };

/** A one-page site on 127.0.0.1 that answers `html` with the header `csp`. */
async function strictSite(html, csp) {
  const server = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": csp, "Cache-Control": "no-store" });
    res.end(html);
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    stop: () => {
      server.closeAllConnections();
      return new Promise((done) => server.close(() => done()));
    },
  };
}

/** Records every CSP violation in every frame from the first script on. */
const RECORD_VIOLATIONS = () => {
  window.__violations = [];
  document.addEventListener("securitypolicyviolation", (e) => {
    window.__violations.push({ directive: e.violatedDirective, blocked: e.blockedURI });
  });
};

describe("partner pages with a strict CSP, in Chromium", () => {
  let dir, server, browser, partner;

  before(async () => {
    dir = tempDir("rampart-e2e-csp-");
    server = await startServer({ dir, before: (db) => createPartner(db, "Strict Shop") });
    partner = server.made;
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    cleanup(dir);
  });

  test("12. the snippet helper's nonce snippet and CSP directives: the widget works, no violation", T, async () => {
    const nonce = randomBytes(18).toString("base64");
    const { script, csp } = await api(server, "POST", `/v1/widget/snippet?nonce=${encodeURIComponent(nonce)}`, partner.secretKey, {
      targetContainerId: "buy",
      clientName: "Strict Shop",
    });
    assert.equal((script.match(new RegExp(`nonce="${nonce.replace(/[+/=]/g, "\\$&")}"`, "g")) || []).length, 2);
    assert.equal(csp.frameSrc, server.base);
    assert.equal(csp.scriptSrc, server.base);
    const policy = `default-src 'none'; script-src 'nonce-${nonce}' ${csp.scriptSrc}; frame-src ${csp.frameSrc}; base-uri 'none'; form-action 'none'`;
    const site = await strictSite(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Strict</title></head><body>\n${script}</body></html>`, policy);
    const opened = await openPage(browser);
    try {
      await opened.context.addInitScript(RECORD_VIOLATIONS);
      await opened.page.goto(site.url);
      const element = await opened.page.waitForSelector("#buy iframe");
      const frame = await element.contentFrame();
      await heading(frame, "Strict Shop");
      assert.deepEqual(await opened.page.evaluate(() => window.__violations), [], "no violation on the partner page");
      assert.deepEqual(await frame.evaluate(() => window.__violations), [], "no violation in the widget page");
      opened.assertClean(assert);
    } finally {
      await opened.close();
      await site.stop();
    }
  });

  test("a CSP that refuses the widget's frame: csp_blocked and the fallback link", T, async () => {
    const nonce = randomBytes(18).toString("base64");
    const render = `window.got = []; Rampart.render({ targetContainerId: "buy", publicKey: ${JSON.stringify(partner.publicKey)}, onEvent: function (e) { window.got.push(e); } });`;
    const html =
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Blocked</title></head><body><div id="buy"></div>` +
      `<script nonce="${nonce}" src="${server.loader}"></script><script nonce="${nonce}">${render}</script></body></html>`;
    const site = await strictSite(html, `default-src 'none'; script-src 'nonce-${nonce}' ${server.base}; frame-src 'none'`);
    const opened = await openPage(browser);
    try {
      await opened.page.goto(site.url);
      await opened.page.waitForFunction(() => window.got && window.got.some((e) => e.type === "error"), null, { timeout: 12000 });
      const got = await opened.page.evaluate(() => window.got);
      assert.equal(got.length, 1, JSON.stringify(got));
      assert.equal(got[0].type, "error");
      assert.equal(got[0].payload.code, "csp_blocked");
      const link = await opened.page.evaluate(() => {
        const a = document.querySelector("#buy a");
        return a && { target: a.getAttribute("target"), rel: a.getAttribute("rel"), href: a.getAttribute("href") };
      });
      assert.equal(link?.target, "_blank");
      assert.match(link?.rel ?? "", /noopener/);
      assert.ok(link?.href.startsWith(`${server.base}/widget/?publicKey=`), JSON.stringify(link));
    } finally {
      await opened.close();
      await site.stop();
    }
  });
});
