// The npm module (dist/npm/index.js and index.cjs, or the fresh build under RAMPART_WIDGET_DIST):
// in plain Node (server-side rendering: nothing defined, `no_browser`), and in the fake DOM of
// fake-dom.mjs beside the built rampart.js: the same iframe for the same options and vectors,
// the `widgetServer` option's checks, and no global.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, test } from "node:test";
import vm from "node:vm";
import { browser } from "./fake-dom.mjs";
import { NPM_DIR, loaderSource, moduleSource, vectors } from "./helpers.mjs";

const LOADER = loaderSource();
const CJS = moduleSource("index.cjs");
const ESM_URL = pathToFileURL(join(NPM_DIR, "index.js")).href;
const SERVER = "https://widget.example.com";
const PK = "pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc";
const SECRET = "sk_sandbox_9fJ2kLmN3pQrS7tUvWxYz";
const NO_BROWSER = "render needs a browser: call it on the client (after mount), not during server-side rendering.";

/** A fake browser with the CommonJS build evaluated in it (as a bundler would wrap it). */
function moduleBrowser() {
  const b = browser({ source: "", scriptSrc: null });
  const globalsBefore = Object.getOwnPropertyNames(b.window);
  const module = { exports: {} };
  vm.runInContext(`(function (module, exports) {\n${CJS}\n})`, b.context, { filename: "index.cjs" })(module, module.exports);
  return { ...b, widget: module.exports, globalsBefore };
}

/** A fake browser with rampart.js as served by `base`. */
function scriptBrowser(base) {
  return browser({ source: LOADER, scriptSrc: base.replace(/\/$/, "") + "/widget/v1/rampart.js" });
}

/** What the page sees of the one iframe: its attributes and CSSOM style. */
function iframeOf(b) {
  const frames = b.document.iframes();
  assert.equal(frames.length, 1);
  return { attributes: Object.fromEntries(frames[0].attributes), style: { ...frames[0].style } };
}

/** Renders `options` with the module on `server` and with rampart.js served by `base`. */
function both(options, server, base = server) {
  const m = moduleBrowser();
  m.document.container("buy");
  const moduleHandle = m.widget.render({ ...options, targetContainerId: "buy", widgetServer: server });
  const s = scriptBrowser(base);
  s.document.container("buy");
  const scriptHandle = s.window.Rampart.render({ ...options, targetContainerId: "buy" });
  return { m, s, moduleHandle, scriptHandle };
}

describe("in Node: importing does nothing, render throws no_browser", () => {
  function assertNoBrowser(widget, options) {
    assert.throws(
      () => widget.render(options),
      (err) => {
        assert.ok(err instanceof widget.RampartWidgetError);
        assert.ok(err instanceof Error);
        assert.deepEqual([err.name, err.code, err.path, err.message], ["RampartWidgetError", "no_browser", "", NO_BROWSER]);
        return true;
      },
    );
  }

  test("the ES module (index.js)", async () => {
    const before = Object.getOwnPropertyNames(globalThis);
    const widget = await import(ESM_URL);
    assert.deepEqual(Object.getOwnPropertyNames(globalThis), before, "no global defined");
    assert.deepEqual(Object.keys(widget).sort(), ["RampartWidgetError", "render"]);
    assertNoBrowser(widget, { widgetServer: SERVER, targetContainerId: "buy", publicKey: PK });
    assertNoBrowser(widget, undefined);
    assert.deepEqual(Object.getOwnPropertyNames(globalThis), before);
  });

  test("the CommonJS build (index.cjs)", () => {
    const before = Object.getOwnPropertyNames(globalThis);
    const widget = createRequire(import.meta.url)(join(NPM_DIR, "index.cjs"));
    assert.deepEqual(Object.getOwnPropertyNames(globalThis), before);
    assert.deepEqual(Object.keys(widget).sort(), ["RampartWidgetError", "render"]);
    assertNoBrowser(widget, { widgetServer: SERVER, targetContainerId: "buy", publicKey: PK });
  });

  test("a window without a document (a worker-like global) is no browser either", () => {
    const context = vm.createContext({ window: {} });
    const module = { exports: {} };
    vm.runInContext(`(function (module, exports) {\n${CJS}\n})`, context)(module, module.exports);
    assert.equal(vm.runInContext("typeof Rampart + typeof window.Rampart", context), "undefinedundefined");
    assert.throws(() => module.exports.render({ widgetServer: SERVER, targetContainerId: "buy", publicKey: PK }), (err) => err.code === "no_browser");
  });
});

describe("in a fake browser: the same widget as rampart.js", () => {
  test("evaluating the module defines no global and touches nothing", () => {
    const m = moduleBrowser();
    assert.deepEqual(Object.getOwnPropertyNames(m.window), m.globalsBefore);
    assert.equal(vm.runInContext("typeof Rampart", m.context), "undefined");
    assert.deepEqual(m.document.log, []);
    assert.equal(m.window.count("message"), 0);
    assert.equal(m.clock.pending(), 0);
  });

  test("one iframe, byte-equal src and the same attributes; widgetServer is not in the URL", () => {
    const options = {
      publicKey: PK,
      clientName: "Café \"Ünïcode\" & Co / 100% ~ok",
      tokens: "btc,eth",
      homeScreenMessage: "Buy with card: fast, safe & simple?",
      receiveAddress: { eth: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", btc: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq" },
      currencies: "eur",
      amount: "50",
      darkTheme: true,
      showRampartLogo: true,
      environment: "sandbox",
      width: 360,
    };
    const { m, s, moduleHandle, scriptHandle } = both(options, SERVER);
    assert.deepEqual(iframeOf(m), iframeOf(s));
    assert.equal(moduleHandle.url, scriptHandle.url);
    assert.ok(moduleHandle.url.startsWith(`${SERVER}/widget/?publicKey=${PK}&clientName=`), moduleHandle.url);
    assert.ok(!/widgetServer|widget\.example\.com.*widget\.example\.com/.test(moduleHandle.url), moduleHandle.url);
    assert.deepEqual(
      m.document.log.filter((e) => e[0] === "create"),
      [["create", "iframe"]],
    );
  });

  const forms = [
    ["https://widget.example.com", "https://widget.example.com", "https://widget.example.com/widget/"],
    ["a trailing slash", "https://widget.example.com/", "https://widget.example.com/widget/"],
    ["upper case and the default port", "HTTPS://Widget.Example.COM:443", "https://widget.example.com/widget/"],
    ["http with a port and a path", "http://127.0.0.1:8080/base", "http://127.0.0.1:8080/base/widget/"],
    ["a path with a trailing slash", "http://127.0.0.1:8080/base/", "http://127.0.0.1:8080/base/widget/"],
  ];
  for (const [name, server, root] of forms) {
    test(`widgetServer ${name}: the root rampart.js served there would use`, () => {
      const script = root.replace(/widget\/$/, "");
      const { m, s, moduleHandle, scriptHandle } = both({ publicKey: PK }, server, script);
      assert.equal(moduleHandle.url, `${root}?publicKey=${PK}`);
      assert.equal(scriptHandle.url, moduleHandle.url);
      assert.deepEqual(iframeOf(m), iframeOf(s));
    });
  }

  describe("the src equals rampart.js's and the core's for every valid vector", () => {
    const roots = ["https://widget.rampart.network/", "https://widget-sandbox.rampart.network/"];
    const cases = [...vectors("widget/build.json").cases, ...vectors("widget/validate.json").cases].filter(
      (c) => !c.config && typeof c.url === "string" && (c.target === "url" || c.target === "script"),
    );
    test("has cases", () => assert.ok(cases.length >= 15, `${cases.length} cases`));
    for (const c of cases) {
      test(c.name, () => {
        // The vector's root, with the server's /widget/ path the module always adds.
        const vectorRoot = roots.find((root) => c.url.startsWith(root));
        assert.ok(vectorRoot, c.url);
        const server = vectorRoot.replace(/\/$/, "");
        const { m, s, moduleHandle, scriptHandle } = both(c.options, server);
        const expected = server + "/widget/" + c.url.slice(vectorRoot.length);
        assert.equal(moduleHandle.url, expected);
        assert.equal(scriptHandle.url, expected);
        assert.deepEqual(iframeOf(m), iframeOf(s));
      });
    }
  });

  test("the handshake, events, a failure's fallback and close() are rampart.js's", () => {
    const m = moduleBrowser();
    const container = m.document.container("buy");
    const events = [];
    const handle = m.widget.render({ widgetServer: SERVER, targetContainerId: "buy", publicKey: PK, onEvent: (e) => events.push(e) });
    const [frame] = m.document.iframes();
    const win = frame.contentWindow;
    frame.dispatch("load");
    assert.deepEqual(
      win.posted.map((p) => [p.targetOrigin, p.data.type, p.data.instanceId, p.data.seq]),
      [[SERVER, "hello", handle.instanceId, 1]],
    );
    const data = { source: "rampart-widget", version: 1, type: "ready", instanceId: handle.instanceId, seq: 1, payload: { url: handle.url } };
    m.window.dispatch("message", { source: win, origin: "https://other.example", data });
    m.window.dispatch("message", { source: win, origin: SERVER, data });
    assert.deepEqual(JSON.parse(JSON.stringify(events)), [{ type: "ready", payload: { url: handle.url }, instanceId: handle.instanceId }]);
    m.document.dispatch("securitypolicyviolation", { blockedURI: SERVER });
    assert.equal(events.length, 1, "no csp_blocked after ready");

    const other = m.document.container("other");
    m.widget.render({ widgetServer: SERVER, targetContainerId: "other", publicKey: PK, onEvent: (e) => events.push(e) });
    m.clock.advance(10000);
    assert.deepEqual(events.map((e) => e.payload.code ?? e.type), ["ready", "timeout"]);
    assert.deepEqual(other.children.map((el) => el.tagName), ["IFRAME", "A"]);

    handle.close();
    handle.close();
    assert.equal(container.children.length, 0);
    assert.equal(frame.count("load"), 0);
  });

  test("a second render into a container of the same widget server is container_in_use", () => {
    const m = moduleBrowser();
    m.document.container("buy");
    const first = m.widget.render({ widgetServer: SERVER, targetContainerId: "buy", publicKey: PK });
    for (const server of [SERVER, SERVER + "/", "HTTPS://WIDGET.EXAMPLE.COM"]) {
      assert.throws(
        () => m.widget.render({ widgetServer: server, targetContainerId: "buy", publicKey: PK }),
        (err) => err instanceof m.widget.RampartWidgetError && err.code === "container_in_use" && err.path === "targetContainerId",
      );
    }
    first.close();
    m.widget.render({ widgetServer: SERVER, targetContainerId: "buy", publicKey: PK }).close();
  });

  test("the script's checks come first, in its order", () => {
    const m = moduleBrowser();
    m.document.container("buy");
    const code = (options) => {
      try {
        m.widget.render(options);
      } catch (err) {
        return [err.code, err.path];
      }
      return null;
    };
    assert.deepEqual(code(null), ["option_invalid", ""]);
    assert.deepEqual(code({ publicKey: SECRET }), ["secret_key", "publicKey"]);
    assert.deepEqual(code({ widgetServer: SERVER, targetContainerId: "buy", publicKey: PK, darkTheme: "yes" }), ["option_invalid", "darkTheme"]);
    assert.deepEqual(code({ publicKey: PK }), ["container_missing", "targetContainerId"]);
    assert.deepEqual(code({ targetContainerId: "buy", publicKey: PK }), ["option_invalid", "widgetServer"]);
    assert.deepEqual(code({ widgetServer: "ftp://x", targetContainerId: "nowhere", publicKey: PK }), ["option_invalid", "widgetServer"]);
    assert.deepEqual(code({ widgetServer: SERVER, targetContainerId: "nowhere", publicKey: PK }), ["container_missing", "targetContainerId"]);
  });
});

describe("widgetServer is checked like the other options", () => {
  const MISSING = "widgetServer is required: the widget server's base URL, e.g. https://widget.example.com.";
  const INVALID =
    "widgetServer must be the widget server's base URL: http or https, with no user name, password, query or fragment (e.g. https://widget.example.com).";
  const WIDGET_PATH = "widgetServer must be the widget server's base URL, without /widget/: render adds it.";
  const cases = [
    ["missing", undefined, MISSING],
    ["null", null, INVALID],
    ["a number", 443, INVALID],
    ["a URL object", new URL(SERVER), INVALID],
    ["empty", "", INVALID],
    ["not a URL", "widget.example.com", INVALID],
    ["scheme-relative", "//widget.example.com", INVALID],
    ["a path only", "/widget", INVALID],
    ["ftp", "ftp://widget.example.com", INVALID],
    ["javascript:", "javascript:alert(1)//", INVALID],
    ["data:", "data:text/html,x", INVALID],
    ["http without //", "http:widget.example.com", INVALID],
    ["no host", "https://", INVALID],
    ["a bad host", "https://exa mple.com", INVALID],
    ["a bad port", "https://widget.example.com:99999", INVALID],
    ["a user name", "https://partner@widget.example.com", INVALID],
    ["a user name and password", "https://partner:hunter2@widget.example.com", INVALID],
    ["a query", "https://widget.example.com?env=sandbox", INVALID],
    ["an empty query", "https://widget.example.com/?", INVALID],
    ["a fragment", "https://widget.example.com#top", INVALID],
    ["an empty fragment", "https://widget.example.com/#", INVALID],
    ["leading white space", " https://widget.example.com", INVALID],
    ["a trailing newline", "https://widget.example.com\n", INVALID],
    ["a tab inside", "https://widget.\texample.com", INVALID],
    ["a control character", "https://widget.example.com/\u0001", INVALID],
    ["not Unicode (lone surrogate)", "https://widget.example.com/\ud800", INVALID],
    ["the widget root", "https://widget.example.com/widget/", WIDGET_PATH],
    ["the widget path without a slash", "https://widget.example.com/widget", WIDGET_PATH],
    ["the v1 path", "https://widget.example.com/widget/v1", WIDGET_PATH],
    ["the loader's URL", "https://widget.example.com/widget/v1/rampart.js", WIDGET_PATH],
    ["a path under /base", "http://127.0.0.1:8080/base/widget/", WIDGET_PATH],
  ];
  for (const [name, widgetServer, message] of cases) {
    test(name, () => {
      const m = moduleBrowser();
      m.document.container("buy");
      assert.throws(
        () => m.widget.render({ widgetServer, targetContainerId: "buy", publicKey: PK }),
        (err) => {
          assert.ok(err instanceof m.widget.RampartWidgetError, String(err));
          assert.deepEqual([err.name, err.code, err.path, err.message], ["RampartWidgetError", "option_invalid", "widgetServer", message]);
          assert.ok(!/hunter2|partner@|env=sandbox/.test(err.message));
          return true;
        },
      );
      assert.deepEqual(m.document.log.filter((e) => e[0] === "create"), [], "nothing created");
      assert.equal(m.clock.pending(), 0);
      assert.equal(m.window.count("message"), 0);
    });
  }

  test("a secret key in widgetServer is secret_key, redacted", () => {
    const m = moduleBrowser();
    m.document.container("buy");
    assert.throws(
      () => m.widget.render({ widgetServer: `https://widget.example.com/${SECRET}`, targetContainerId: "buy", publicKey: PK }),
      (err) => err.code === "secret_key" && err.path === "widgetServer" && !err.message.includes(SECRET),
    );
  });

  test("a path that merely contains 'widget' is a base URL", () => {
    const m = moduleBrowser();
    m.document.container("buy");
    const handle = m.widget.render({ widgetServer: "https://example.com/widgets", targetContainerId: "buy", publicKey: PK });
    assert.equal(handle.url, `https://example.com/widgets/widget/?publicKey=${PK}`);
  });
});

test("the ES module build in a fake DOM (window and document as globals): the same iframe as rampart.js", async () => {
  const m = browser({ source: "", scriptSrc: null });
  m.document.container("buy");
  globalThis.window = m.window;
  globalThis.document = m.document;
  try {
    const widget = await import(ESM_URL);
    const handle = widget.render({ widgetServer: SERVER, targetContainerId: "buy", publicKey: PK, clientName: "Acme Shop", darkTheme: true });
    const s = scriptBrowser(SERVER);
    s.document.container("buy");
    const scriptHandle = s.window.Rampart.render({ targetContainerId: "buy", publicKey: PK, clientName: "Acme Shop", darkTheme: true });
    assert.equal(handle.url, scriptHandle.url);
    assert.deepEqual(iframeOf(m), iframeOf(s));
    handle.close();
    assert.equal(m.document.iframes().length, 0);
  } finally {
    delete globalThis.window;
    delete globalThis.document;
  }
});
