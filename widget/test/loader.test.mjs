// The built loader (dist/rampart.js, or the fresh build under RAMPART_WIDGET_DIST) run in a
// hand-made fake browser (fake-dom.mjs): the global, the synchronous checks, the iframe, the
// handshake, the failures and their fallback link, close(), and SSR safety.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import vm from "node:vm";
import { browser } from "./fake-dom.mjs";
import { REPO_DIR, importSource, loaderSource, vectors } from "./helpers.mjs";

const SOURCE = loaderSource();
const ORIGIN = "https://widget.example.com";
const SCRIPT = `${ORIGIN}/widget/v1/rampart.js`;
const PK = "pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc";
const SECRET = "sk_sandbox_9fJ2kLmN3pQrS7tUvWxYz";

/** A browser with the loader, a container "buy" and a render call recording its events. */
function setup(options = {}, { scriptSrc = SCRIPT } = {}) {
  const b = browser({ source: SOURCE, scriptSrc });
  const container = b.document.container("buy");
  const events = [];
  const handle = b.window.Rampart.render({ targetContainerId: "buy", publicKey: PK, onEvent: (e) => events.push(e), ...options });
  const frame = b.document.iframes()[0];
  const win = frame.contentWindow;
  /** The page posting an envelope to the loader. */
  const page = (type, payload = {}, seq = 1, extra = {}) =>
    b.window.dispatch("message", {
      source: win,
      origin: ORIGIN,
      data: { source: "rampart-widget", version: 1, type, instanceId: handle.instanceId, seq, payload, ...extra },
    });
  return { ...b, container, events, handle, frame, win, page };
}

/** A copy in this realm (objects made inside the vm context have its prototypes). */
function plain(value) {
  return JSON.parse(JSON.stringify(value));
}

function links(container) {
  return container.children.filter((el) => el.tagName === "A");
}

function snippetConstant(name) {
  const source = readFileSync(join(REPO_DIR, "core/src/widget/snippet.rs"), "utf8");
  const match = new RegExp(`pub const ${name}: &str = "([^"]*)";`).exec(source);
  assert.ok(match, `${name} in snippet.rs`);
  return match[1];
}

describe("SSR safety and the one global", () => {
  test("evaluating where there is no window does nothing and throws nothing", () => {
    const context = vm.createContext({});
    vm.runInContext(SOURCE, context);
    assert.equal(vm.runInContext("typeof Rampart", context), "undefined");
  });

  test("a window without a document (a worker-like global) does nothing either", () => {
    const context = vm.createContext({ window: {} });
    vm.runInContext(SOURCE, context);
    assert.equal(vm.runInContext("typeof Rampart + typeof window.Rampart", context), "undefinedundefined");
  });

  test("importing the TypeScript module in Node (no window) throws nothing", async () => {
    const loader = await importSource("loader");
    assert.equal(typeof loader.createApi, "function");
    assert.equal(typeof globalThis.Rampart, "undefined");
  });

  test("loading the script twice defines one global, the first", () => {
    const once = browser({ source: SOURCE });
    const first = once.window.Rampart;
    vm.runInContext(SOURCE, once.context);
    assert.equal(once.window.Rampart, first);
    assert.ok(Object.isFrozen(first));
    assert.deepEqual(Object.keys(first).sort(), ["RampartWidgetError", "render"]);
    const twice = browser({ source: SOURCE, times: 2 });
    assert.equal(typeof twice.window.Rampart.render, "function");
  });

  test("a page's own Rampart global is left alone", () => {
    const b = browser({ source: "window.Rampart = 'mine';" });
    vm.runInContext(SOURCE, b.context);
    assert.equal(b.window.Rampart, "mine");
  });
});

describe("synchronous checks", () => {
  const base = { targetContainerId: "buy", publicKey: PK };
  const cases = [
    ["options null", null, "option_invalid", ""],
    ["options a string", "buy", "option_invalid", ""],
    ["options an array", [base], "option_invalid", ""],
    ["targetContainerId missing", { publicKey: PK }, "container_missing", "targetContainerId"],
    ["no element with the id", { ...base, targetContainerId: "nope" }, "container_missing", "targetContainerId"],
    ["targetContainerId empty", { ...base, targetContainerId: "" }, "container_invalid", "targetContainerId"],
    ["targetContainerId with a space", { ...base, targetContainerId: "buy now" }, "container_invalid", "targetContainerId"],
    ["targetContainerId with a newline", { ...base, targetContainerId: "buy\n" }, "container_invalid", "targetContainerId"],
    ["targetContainerId a number", { ...base, targetContainerId: 7 }, "container_invalid", "targetContainerId"],
    ["targetContainerId too long", { ...base, targetContainerId: "b".repeat(129) }, "container_invalid", "targetContainerId"],
    ["publicKey a secret key", { ...base, publicKey: SECRET }, "secret_key", "publicKey"],
    ["publicKey any sk_ key", { ...base, publicKey: "sk_live_abc" }, "secret_key", "publicKey"],
    ["apiKey a secret key", { targetContainerId: "buy", apiKey: "sk_production_x" }, "secret_key", "apiKey"],
    ["a secret key inside clientName", { ...base, clientName: `Acme ${SECRET}` }, "secret_key", "clientName"],
    ["a secret key in a receive address", { ...base, receiveAddress: { btc: SECRET } }, "secret_key", "receiveAddress.btc"],
    ["a secret key in an unknown option", { ...base, secretKey: SECRET }, "secret_key", "secretKey"],
    ["a secret key wins over a missing container", { publicKey: SECRET }, "secret_key", "publicKey"],
    ["publicKey not a string", { ...base, publicKey: 42 }, "option_invalid", "publicKey"],
    ["publicKey of another shape", { ...base, publicKey: "pk_test_abc" }, "option_invalid", "publicKey"],
    ["publicKey with a space", { ...base, publicKey: "pk_sandbox_ab c" }, "option_invalid", "publicKey"],
    ["neither publicKey nor apiKey", { targetContainerId: "buy" }, "option_invalid", "publicKey"],
    ["clientName not a string", { ...base, clientName: ["Acme"] }, "option_invalid", "clientName"],
    ["clientName not Unicode (lone surrogate)", { ...base, clientName: "A\ud800" }, "option_invalid", "clientName"],
    ["amount a number", { ...base, amount: 50 }, "option_invalid", "amount"],
    ["tokens an array", { ...base, tokens: ["btc"] }, "option_invalid", "tokens"],
    ["environment a boolean", { ...base, environment: true }, "option_invalid", "environment"],
    ["darkTheme a string", { ...base, darkTheme: "true" }, "option_invalid", "darkTheme"],
    ["showRampartLogo a number", { ...base, showRampartLogo: 1 }, "option_invalid", "showRampartLogo"],
    ["receiveAddress a string", { ...base, receiveAddress: "bc1q" }, "option_invalid", "receiveAddress"],
    ["receiveAddress an array", { ...base, receiveAddress: ["bc1q"] }, "option_invalid", "receiveAddress"],
    ["receiveAddress null", { ...base, receiveAddress: null }, "option_invalid", "receiveAddress"],
    ["a receive address not a string", { ...base, receiveAddress: { btc: 1 } }, "option_invalid", "receiveAddress.btc"],
    ["width zero", { ...base, width: 0 }, "option_invalid", "width"],
    ["width a string", { ...base, width: "420" }, "option_invalid", "width"],
    ["height fractional", { ...base, height: 550.5 }, "option_invalid", "height"],
    ["onEvent not a function", { ...base, onEvent: "log" }, "option_invalid", "onEvent"],
  ];
  for (const [name, options, code, path] of cases) {
    test(name, () => {
      const b = browser({ source: SOURCE });
      b.document.container("buy");
      const { RampartWidgetError } = b.window.Rampart;
      assert.throws(
        () => b.window.Rampart.render(options),
        (err) => {
          assert.ok(err instanceof RampartWidgetError, String(err));
          assert.ok(err instanceof vm.runInContext("Error", b.context));
          assert.equal(err.name, "RampartWidgetError");
          assert.equal(err.code, code);
          assert.equal(err.path, path);
          assert.ok(err.message.length > 0);
          assert.ok(!err.message.includes(SECRET) && !err.message.includes("sk_live_abc"), err.message);
          return true;
        },
      );
      assert.deepEqual(b.document.log.filter((e) => e[0] === "create"), [], "nothing created");
      assert.equal(b.clock.pending(), 0, "no timer");
      assert.equal(b.window.count("message"), 0, "no listener");
    });
  }

  test("apiKey alone is enough (the page reports its deprecation)", () => {
    const b = browser({ source: SOURCE });
    b.document.container("buy");
    const handle = b.window.Rampart.render({ targetContainerId: "buy", apiKey: "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11" });
    assert.equal(handle.url, `${ORIGIN}/widget/?apiKey=6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11`);
  });

  test("a second render into the same container is container_in_use; after close it works", () => {
    const s = setup();
    assert.throws(
      () => s.window.Rampart.render({ targetContainerId: "buy", publicKey: PK }),
      (err) => err.code === "container_in_use" && err.path === "targetContainerId",
    );
    assert.equal(s.document.iframes().length, 1);
    s.handle.close();
    const again = s.window.Rampart.render({ targetContainerId: "buy", publicKey: PK });
    assert.equal(s.document.iframes().length, 1);
    again.close();
  });

  test("a container whose widget was removed by the page can be used again", () => {
    const s = setup();
    s.frame.remove();
    s.window.Rampart.render({ targetContainerId: "buy", publicKey: PK }).close();
  });

  test("no script URL (not loaded by <script src>) is script_url_unknown", () => {
    const b = browser({ source: SOURCE, scriptSrc: null });
    b.document.container("buy");
    assert.throws(
      () => b.window.Rampart.render({ targetContainerId: "buy", publicKey: PK }),
      (err) => err.code === "script_url_unknown",
    );
    assert.equal(b.document.iframes().length, 0);
  });
});

describe("the iframe", () => {
  test("one iframe with the canonical src, sizes, title, allow and referrerpolicy", () => {
    const s = setup({ clientName: "Acme Shop", darkTheme: true, environment: "sandbox" });
    assert.equal(s.document.iframes().length, 1);
    assert.equal(s.container.children.length, 1);
    const url = `${ORIGIN}/widget/?publicKey=${PK}&clientName=Acme%20Shop&darkTheme=true`;
    assert.equal(s.frame.getAttribute("src"), url);
    assert.equal(s.handle.url, url);
    assert.equal(s.frame.getAttribute("width"), "420");
    assert.equal(s.frame.getAttribute("height"), "550");
    assert.equal(s.frame.getAttribute("title"), "Acme Shop purchase widget");
    assert.equal(s.frame.getAttribute("allow"), snippetConstant("IFRAME_ALLOW"));
    assert.equal(s.frame.getAttribute("referrerpolicy"), snippetConstant("IFRAME_REFERRER_POLICY"));
    assert.equal(s.frame.style.maxWidth, "100%");
    assert.equal(s.frame.style.border, "0");
    assert.equal(s.frame.getAttribute("style"), null, "CSSOM, not an inline style attribute");
    assert.equal(s.frame.getAttribute("loading"), null, "eager: a lazy frame would trip the ready timeout");
    assert.equal(s.frame.getAttribute("sandbox"), null);
    assert.match(s.handle.instanceId, /^[0-9a-f]{32}$/);
    assert.equal(s.win.posted.length, 0, "nothing posted before the frame loads");
  });

  test("sizes given, default title, random instance ids", () => {
    const s = setup({ width: 360, height: 640 });
    assert.equal(s.frame.getAttribute("width"), "360");
    assert.equal(s.frame.getAttribute("height"), "640");
    assert.equal(s.frame.getAttribute("title"), "Rampart purchase widget");
    const other = s.document.container("two");
    const second = s.window.Rampart.render({ targetContainerId: "two", publicKey: PK });
    assert.notEqual(second.instanceId, s.handle.instanceId);
    assert.equal(other.children.length, 1);
  });

  test("the root is ../ of the script URL, whatever path the server is under", () => {
    const s = setup({}, { scriptSrc: "http://127.0.0.1:8080/base/widget/v1/rampart.js?cache=1" });
    assert.equal(s.handle.url, `http://127.0.0.1:8080/base/widget/?publicKey=${PK}`);
  });

  describe("the src equals the core's URL for every valid vector (served from the vector root)", () => {
    const roots = { production: "https://widget.rampart.network/", sandbox: "https://widget-sandbox.rampart.network/" };
    const cases = [...vectors("widget/build.json").cases, ...vectors("widget/validate.json").cases].filter(
      (c) => !c.config && typeof c.url === "string" && (c.target === "url" || c.target === "script"),
    );
    for (const c of cases) {
      test(c.name, () => {
        const root = c.url.startsWith(roots.sandbox) ? roots.sandbox : roots.production;
        const b = browser({ source: SOURCE, scriptSrc: root + "v1/rampart.js" });
        b.document.container("vector-container");
        const handle = b.window.Rampart.render({ ...c.options, targetContainerId: "vector-container" });
        assert.equal(b.document.iframes()[0].getAttribute("src"), c.url);
        assert.equal(handle.url, c.url);
      });
    }
  });
});

describe("handshake and messages", () => {
  test("hello after load, to the widget origin only, then ready reaches onEvent", () => {
    const s = setup();
    s.frame.dispatch("load");
    assert.equal(s.win.posted.length, 1);
    const [{ data, targetOrigin }] = s.win.posted;
    assert.equal(targetOrigin, ORIGIN);
    assert.deepEqual(data, { source: "rampart-widget", version: 1, type: "hello", instanceId: s.handle.instanceId, seq: 1, payload: {} });
    s.page("ready", { url: s.handle.url });
    assert.deepEqual(plain(s.events), [{ type: "ready", payload: { url: s.handle.url }, instanceId: s.handle.instanceId }]);
    s.clock.advance(60000);
    assert.equal(s.events.length, 1, "no timeout after ready");
    assert.equal(links(s.container).length, 0);
  });

  test("forged messages are ignored: other window, other origin, other instance, replayed seq", () => {
    const s = setup();
    s.frame.dispatch("load");
    const data = { source: "rampart-widget", version: 1, type: "order.completed", instanceId: s.handle.instanceId, seq: 5, payload: { orderId: "x" } };
    s.window.dispatch("message", { source: s.window, origin: ORIGIN, data });
    s.window.dispatch("message", { source: s.win, origin: "https://evil.example", data });
    s.window.dispatch("message", { source: s.win, origin: ORIGIN, data: { ...data, instanceId: "0".repeat(32) } });
    s.window.dispatch("message", { source: s.win, origin: ORIGIN, data: { ...data, version: 2 } });
    s.window.dispatch("message", { source: s.win, origin: ORIGIN, data: "junk" });
    assert.deepEqual(s.events, []);
    s.page("ready", { url: s.handle.url }, 3);
    s.page("screen", { name: "amount" }, 3);
    s.page("screen", { name: "amount" }, 2);
    s.page("order.refunded", {}, 9);
    s.page("screen", { name: "review" }, 4);
    assert.deepEqual(
      s.events.map((e) => [e.type, e.payload.name ?? null]),
      [["ready", null], ["screen", "review"]],
    );
  });

  test("each page load gets a new hello and numbers its messages afresh", () => {
    const s = setup();
    s.frame.dispatch("load");
    s.page("ready", {}, 1);
    s.page("screen", { name: "sign-in" }, 2);
    s.frame.dispatch("load");
    assert.equal(s.win.posted[1].data.seq, 2);
    s.page("ready", {}, 1);
    assert.deepEqual(s.events.map((e) => e.type), ["ready", "screen", "ready"]);
  });

  test("two widgets on one page each see only their own messages", () => {
    const s = setup();
    s.document.container("two");
    const theirs = [];
    const second = s.window.Rampart.render({ targetContainerId: "two", publicKey: PK, onEvent: (e) => theirs.push(e) });
    const secondFrame = s.document.iframes()[1];
    s.page("ready", {}, 1);
    s.window.dispatch("message", {
      source: secondFrame.contentWindow,
      origin: ORIGIN,
      data: { source: "rampart-widget", version: 1, type: "close", instanceId: second.instanceId, seq: 1, payload: {} },
    });
    assert.deepEqual(s.events.map((e) => e.type), ["ready"]);
    assert.deepEqual(theirs.map((e) => [e.type, e.instanceId]), [["close", second.instanceId]]);
  });

  test("an onEvent that is not given is fine", () => {
    const b = browser({ source: SOURCE });
    b.document.container("buy");
    b.window.Rampart.render({ targetContainerId: "buy", publicKey: PK });
    b.clock.advance(20000);
    assert.equal(b.document.getElementById("buy").children.length, 2);
  });
});

describe("failures: a coded error event and a fallback link", () => {
  function assertFallback(s, { hidden }) {
    const [link, ...more] = links(s.container);
    assert.equal(more.length, 0, "one link");
    assert.equal(link.getAttribute("href"), s.handle.url);
    assert.equal(link.getAttribute("target"), "_blank");
    assert.equal(link.getAttribute("rel"), "noopener");
    assert.ok(link.textContent.length > 0);
    assert.equal(s.frame.style.display === "none", hidden);
  }

  test("timeout: no ready within 10 s (nothing loaded)", () => {
    const s = setup();
    s.clock.advance(9999);
    assert.deepEqual(s.events, []);
    s.clock.advance(1);
    assert.equal(s.events.length, 1);
    assert.equal(s.events[0].type, "error");
    assert.equal(s.events[0].payload.code, "timeout");
    assert.equal(typeof s.events[0].payload.message, "string");
    assert.equal(s.events[0].instanceId, s.handle.instanceId);
    assertFallback(s, { hidden: false });
    s.clock.advance(60000);
    assert.equal(s.events.length, 1);
  });

  test("a late ready after the timeout takes the fallback away", () => {
    const s = setup();
    s.clock.advance(10000);
    s.frame.dispatch("load");
    s.page("ready", {}, 1);
    assert.deepEqual(s.events.map((e) => e.type), ["error", "ready"]);
    assert.equal(links(s.container).length, 0);
  });

  test("frame_blocked: the frame loaded but never answered hello", () => {
    const s = setup();
    s.clock.advance(500);
    s.frame.dispatch("load");
    s.clock.advance(2999);
    assert.deepEqual(s.events, []);
    s.clock.advance(1);
    assert.deepEqual(s.events.map((e) => e.payload.code), ["frame_blocked"]);
    assertFallback(s, { hidden: true });
    s.clock.advance(60000);
    assert.equal(s.events.length, 1, "no timeout on top");
  });

  test("a frame that answers (not yet ready) is not blocked; the ready timeout still holds", () => {
    const s = setup();
    s.frame.dispatch("load");
    s.page("screen", { name: "home" }, 1);
    s.clock.advance(9999);
    assert.deepEqual(s.events.map((e) => e.type), ["screen"]);
    s.clock.advance(1);
    assert.deepEqual(s.events.map((e) => e.payload.code ?? e.type), ["screen", "timeout"]);
  });

  test("not_approved reported by the page: its event once, the fallback, the frame kept", () => {
    const s = setup();
    s.frame.dispatch("load");
    s.page("ready", { url: s.handle.url }, 1);
    s.page("error", { code: "not_approved", message: "Not approved yet." }, 2);
    assert.deepEqual(s.events.map((e) => [e.type, e.payload.code ?? null]), [["ready", null], ["error", "not_approved"]]);
    assert.equal(s.events[1].payload.message, "Not approved yet.");
    assertFallback(s, { hidden: false });
  });

  test("frame_blocked reported by the page", () => {
    const s = setup();
    s.frame.dispatch("load");
    s.page("error", { code: "frame_blocked", message: "Origin not registered." }, 1);
    s.clock.advance(60000);
    assert.deepEqual(s.events.map((e) => e.payload.code), ["frame_blocked"]);
    assertFallback(s, { hidden: false });
  });

  test("other page errors pass through without a fallback", () => {
    const s = setup();
    s.page("ready", {}, 1);
    s.page("error", { code: "amount_too_small", message: "amount: at least 5" }, 2);
    assert.equal(links(s.container).length, 0);
    assert.equal(s.events[1].payload.code, "amount_too_small");
  });

  test("csp_blocked: a securitypolicyviolation naming the widget origin", () => {
    const s = setup();
    s.document.dispatch("securitypolicyviolation", { blockedURI: "https://other.example/x.js" });
    s.document.dispatch("securitypolicyviolation", { blockedURI: "inline" });
    s.document.dispatch("securitypolicyviolation", { blockedURI: "https://widget.example.com.evil.example/" });
    assert.deepEqual(s.events, []);
    s.document.dispatch("securitypolicyviolation", { blockedURI: ORIGIN });
    assert.deepEqual(s.events.map((e) => e.payload.code), ["csp_blocked"]);
    assertFallback(s, { hidden: true });
    s.clock.advance(60000);
    assert.equal(s.events.length, 1);
  });

  test("no fallback text holds the key beyond the URL itself", () => {
    const s = setup();
    s.clock.advance(10000);
    const [link] = links(s.container);
    assert.ok(!link.textContent.includes(PK));
  });
});

describe("close()", () => {
  test("removes the iframe, the link, the listeners and the timers; twice is fine", () => {
    const s = setup();
    s.clock.advance(10000);
    assert.equal(s.container.children.length, 2);
    s.handle.close();
    assert.equal(s.container.children.length, 0);
    assert.equal(s.window.count("message"), 0);
    assert.equal(s.document.count("securitypolicyviolation"), 0);
    assert.equal(s.frame.count("load"), 0);
    assert.equal(s.clock.pending(), 0);
    s.handle.close();
  });

  test("before any failure: nothing fires afterwards", () => {
    const s = setup();
    s.frame.dispatch("load");
    s.handle.close();
    s.clock.advance(60000);
    s.page("ready", {}, 1);
    assert.deepEqual(s.events, []);
    assert.equal(s.container.children.length, 0);
  });
});

describe("no request but the iframe", () => {
  test("the bundle names no network API and creates only the iframe and the link", () => {
    for (const api of ["fetch", "XMLHttpRequest", "sendBeacon", "WebSocket", "EventSource", "import(", "Image", "createElement(\"script", "createElement(\"link"]) {
      assert.ok(!SOURCE.includes(api), api);
    }
    const s = setup();
    s.clock.advance(10000);
    assert.deepEqual(
      s.document.log.filter((e) => e[0] === "create").map((e) => e[1]),
      ["iframe", "a"],
    );
  });
});
