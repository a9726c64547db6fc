/* @rampart/widget: the Rampart widget loader as a module. Built from widget/src by esbuild; do not edit. */
"use strict";
var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let key of __getOwnPropNames(from))
      if (!__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return to;
};
var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

// src/module.ts
var module_exports = {};
__export(module_exports, {
  RampartWidgetError: () => RampartWidgetError,
  render: () => render
});
module.exports = __toCommonJS(module_exports);

// src/envelope.ts
var ENVELOPE_SOURCE = "rampart-widget";
var ENVELOPE_VERSION = 1;
var PAGE_MESSAGE_TYPES = [
  "ready",
  "screen",
  "resize",
  "order.created",
  "order.completed",
  "order.failed",
  "close",
  "error"
];
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function acceptMessage(state, event) {
  try {
    if (!state.frame || event.source !== state.frame || event.origin !== state.origin) return null;
    const data = event.data;
    if (!isObject(data)) return null;
    const { source, version, type, instanceId, seq, payload } = data;
    if (source !== ENVELOPE_SOURCE || version !== ENVELOPE_VERSION || instanceId !== state.instanceId || PAGE_MESSAGE_TYPES.indexOf(type) < 0 || typeof seq !== "number" || !Number.isSafeInteger(seq) || seq <= state.seq || !isObject(payload)) {
      return null;
    }
    return { source, version, type, instanceId, seq, payload };
  } catch {
    return null;
  }
}
function envelope(type, instanceId, seq, payload) {
  return { source: ENVELOPE_SOURCE, version: ENVELOPE_VERSION, type, instanceId, seq, payload };
}

// src/url.ts
var DEFAULT_COINS = ["btc", "ltc", "eth", "usdc", "usdt", "dai", "sol"];
var DEFAULT_BRAND = "Rampart";
function capitalise(text) {
  const first = text.charAt(0);
  return (first >= "a" && first <= "z" ? first.toUpperCase() : first) + text.slice(1);
}
function encode(text) {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}
function canonicalQuery(options, brand = DEFAULT_BRAND, coins = DEFAULT_COINS) {
  const parts = [];
  const put = (name, value) => {
    if (typeof value === "boolean") value = String(value);
    if (typeof value === "string") parts.push(encode(name) + "=" + encode(value));
  };
  const text = (name) => put(name, typeof options[name] === "string" ? options[name] : void 0);
  const flag = (name) => put(name, typeof options[name] === "boolean" ? options[name] : void 0);
  text("publicKey");
  text("apiKey");
  text("clientName");
  text("tokens");
  const addresses = options.receiveAddress;
  if (typeof addresses === "object" && addresses !== null && !Array.isArray(addresses)) {
    const map = addresses;
    const given = Object.keys(map);
    const known = coins.filter((coin) => given.indexOf(coin) >= 0);
    for (const coin of known.concat(given.filter((coin2) => coins.indexOf(coin2) < 0))) {
      if (typeof map[coin] === "string") put("receiveAddress" + capitalise(coin), map[coin]);
    }
  }
  text("homeScreenMessage");
  flag("darkTheme");
  text("currencies");
  text("amount");
  flag("show" + capitalise(brand) + "Logo");
  return parts.join("&");
}
function buildUrl(root, options, brand = DEFAULT_BRAND, coins = DEFAULT_COINS) {
  const query = canonicalQuery(options, brand, coins);
  return query ? root + "?" + query : root;
}
function widgetRoot(scriptUrl) {
  return new URL("../", scriptUrl).href;
}

// src/loader.ts
var IFRAME_ALLOW = "payment; camera; microphone; clipboard-write";
var IFRAME_REFERRER_POLICY = "strict-origin-when-cross-origin";
var READY_TIMEOUT_MS = 1e4;
var ANSWER_TIMEOUT_MS = 3e3;
var RampartWidgetError = class extends Error {
  constructor(code, path, message) {
    super(message);
    this.name = "RampartWidgetError";
    this.code = code;
    this.path = path;
  }
};
var SECRET_KEY = /sk_(sandbox|production)_/;
var PUBLISHABLE_KEY = /^pk_(sandbox|production)_[A-Za-z0-9]{1,128}$/;
var TEXT_OPTIONS = ["publicKey", "apiKey", "environment", "clientName", "tokens", "homeScreenMessage", "currencies", "amount"];
var FLAG_OPTIONS = ["darkTheme", "showRampartLogo"];
var MAX_SIZE = 1e4;
function isBag(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function isText(value) {
  try {
    return typeof value === "string" && typeof encode(value) === "string";
  } catch {
    return false;
  }
}
function invalid(path, what) {
  return new RampartWidgetError("option_invalid", path, (path || "options") + " must be " + what + ".");
}
function checkOptions(options) {
  if (!isBag(options)) throw invalid("", "an object");
  for (const key of Object.keys(options)) {
    const value = options[key];
    const entries = isBag(value) ? Object.keys(value).map((coin) => [key + "." + coin, value[coin]]) : [[key, value]];
    for (const [path, text] of entries) {
      const secret = typeof text === "string" && (SECRET_KEY.test(text) || /^(publicKey|apiKey)$/.test(path) && text.indexOf("sk_") === 0);
      if (secret) {
        throw new RampartWidgetError(
          "secret_key",
          path,
          path + " holds a secret key: pass the publishable key (pk_...) and keep secret keys on your server."
        );
      }
    }
  }
  const given = (key) => options[key] !== void 0;
  for (const key of TEXT_OPTIONS) if (given(key) && !isText(options[key])) throw invalid(key, "a string");
  for (const key of FLAG_OPTIONS) if (given(key) && typeof options[key] !== "boolean") throw invalid(key, "a boolean");
  for (const key of ["width", "height"]) {
    const size = options[key];
    if (given(key) && !(typeof size === "number" && Number.isInteger(size) && size > 0 && size <= MAX_SIZE)) {
      throw invalid(key, "a whole number of pixels from 1 to " + MAX_SIZE);
    }
  }
  if (given("onEvent") && typeof options.onEvent !== "function") throw invalid("onEvent", "a function");
  const addresses = options.receiveAddress;
  if (given("receiveAddress")) {
    if (!isBag(addresses)) throw invalid("receiveAddress", "an object of coin: address strings");
    for (const coin of Object.keys(addresses)) {
      if (!isText(addresses[coin])) throw invalid("receiveAddress." + coin, "a string");
    }
  }
  if (!given("publicKey") && !given("apiKey")) throw invalid("publicKey", "given (or the legacy apiKey)");
  if (given("publicKey") && !PUBLISHABLE_KEY.test(options.publicKey)) {
    throw invalid("publicKey", "a publishable key, pk_sandbox_... or pk_production_...");
  }
  const id = options.targetContainerId;
  if (id === void 0) {
    throw new RampartWidgetError("container_missing", "targetContainerId", "targetContainerId is required.");
  }
  if (typeof id !== "string" || !id || id.length > 128 || /[\s\u0000-\u001f\u007f-\u009f]/.test(id)) {
    throw new RampartWidgetError(
      "container_invalid",
      "targetContainerId",
      "targetContainerId must be an HTML id: 1 to 128 characters, no spaces."
    );
  }
}
function randomId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  let id = "";
  for (const byte of bytes) id += (byte + 256).toString(16).slice(1);
  return id;
}
var FAILURES = {
  timeout: "The widget did not get ready within 10 seconds.",
  not_approved: "This widget is not approved for production yet.",
  frame_blocked: "The widget page refused to load in this page: register this origin in widgetOrigins.",
  csp_blocked: "This page's Content-Security-Policy blocks the widget: allow its origin in frame-src."
};
function createApi(scriptUrl) {
  const frames = /* @__PURE__ */ new WeakMap();
  function render2(options) {
    checkOptions(options);
    const container = document.getElementById(options.targetContainerId);
    if (!container) {
      throw new RampartWidgetError("container_missing", "targetContainerId", "No element has the id in targetContainerId.");
    }
    const previous = frames.get(container);
    if (previous && previous.parentNode === container) {
      throw new RampartWidgetError(
        "container_in_use",
        "targetContainerId",
        "A widget is already rendered in this container: close its handle first."
      );
    }
    if (!scriptUrl) {
      throw new RampartWidgetError("script_url_unknown", "", "Load rampart.js with a <script src> tag from the widget server.");
    }
    const root = widgetRoot(scriptUrl);
    const origin = new URL(root).origin;
    const url = buildUrl(root, options);
    const instanceId = randomId();
    const onEvent = options.onEvent;
    const clientName = options.clientName;
    const frame = document.createElement("iframe");
    const state = { frame: null, origin, instanceId, seq: 0 };
    const timers = {};
    let sent = 0;
    let ready = false;
    let failure = "";
    let closed = false;
    let link;
    const stop = (name) => clearTimeout(timers[name]);
    const emit = (type, payload) => {
      if (onEvent) onEvent({ type, payload, instanceId });
    };
    const removeLink = () => {
      if (link) link.remove();
      link = void 0;
    };
    const fail = (code, message, report, hide) => {
      if (failure || closed) return;
      failure = code;
      stop("ready");
      stop("answer");
      if (hide) frame.style.display = "none";
      link = document.createElement("a");
      link.setAttribute("href", url);
      link.setAttribute("target", "_blank");
      link.setAttribute("rel", "noopener");
      link.textContent = "Open the Rampart widget";
      container.appendChild(link);
      if (report) emit("error", { code, message: message || FAILURES[code] });
    };
    const onLoad = () => {
      state.seq = 0;
      const target = frame.contentWindow;
      try {
        if (target) target.postMessage(envelope("hello", instanceId, ++sent, {}), origin);
      } catch {
      }
      stop("answer");
      if (!ready) timers.answer = setTimeout(() => fail("frame_blocked", "", true, true), ANSWER_TIMEOUT_MS);
    };
    const onMessage = (event) => {
      state.frame = frame.contentWindow;
      const message = acceptMessage(state, event);
      if (!message) return;
      state.seq = message.seq;
      stop("answer");
      if (message.type === "ready") {
        ready = true;
        stop("ready");
        if (failure === "timeout" || failure === "frame_blocked") {
          failure = "";
          frame.style.display = "";
          removeLink();
        }
      }
      const code = message.payload.code;
      if (message.type === "error" && (code === "not_approved" || code === "frame_blocked")) {
        fail(code, "", false, false);
      }
      emit(message.type, message.payload);
    };
    const onViolation = (event) => {
      let blocked = "";
      try {
        blocked = new URL(event.blockedURI).origin;
      } catch {
        return;
      }
      if (!ready && blocked === origin) fail("csp_blocked", "", true, true);
    };
    frame.setAttribute("src", url);
    frame.setAttribute("width", String(options.width || 420));
    frame.setAttribute("height", String(options.height || 550));
    frame.setAttribute("title", (clientName && clientName.trim() ? clientName : "Rampart") + " purchase widget");
    frame.setAttribute("allow", IFRAME_ALLOW);
    frame.setAttribute("referrerpolicy", IFRAME_REFERRER_POLICY);
    frame.style.border = "0";
    frame.style.maxWidth = "100%";
    frame.addEventListener("load", onLoad);
    window.addEventListener("message", onMessage);
    document.addEventListener("securitypolicyviolation", onViolation);
    container.appendChild(frame);
    frames.set(container, frame);
    timers.ready = setTimeout(() => fail("timeout", "", true, false), READY_TIMEOUT_MS);
    return {
      instanceId,
      url,
      close() {
        if (closed) return;
        closed = true;
        stop("ready");
        stop("answer");
        state.frame = null;
        window.removeEventListener("message", onMessage);
        document.removeEventListener("securitypolicyviolation", onViolation);
        frame.removeEventListener("load", onLoad);
        frame.remove();
        removeLink();
      }
    };
  }
  return { render: render2, RampartWidgetError };
}

// src/module.ts
var NO_BROWSER = "render needs a browser: call it on the client (after mount), not during server-side rendering.";
var apis = {};
function serverInvalid(message) {
  return new RampartWidgetError("option_invalid", "widgetServer", message);
}
function scriptUrlOf(widgetServer) {
  if (widgetServer === void 0) {
    throw serverInvalid("widgetServer is required: the widget server's base URL, e.g. https://widget.example.com.");
  }
  let base;
  try {
    if (typeof widgetServer === "string" && /^https?:\/\/[^\s?#\u0000-\u001f\u007f]+$/i.test(widgetServer) && encode(widgetServer)) {
      base = new URL(widgetServer);
    }
  } catch {
    base = void 0;
  }
  if (!base || base.username || base.password) {
    throw serverInvalid(
      "widgetServer must be the widget server's base URL: http or https, with no user name, password, query or fragment (e.g. https://widget.example.com)."
    );
  }
  const href = base.href.replace(/\/?$/, "/");
  if (/\/widget\/(v1\/)?$|\.js\/$/.test(href)) {
    throw serverInvalid("widgetServer must be the widget server's base URL, without /widget/: render adds it.");
  }
  return href + "widget/v1/rampart.js";
}
function render(options) {
  if (typeof window === "undefined" || typeof document === "undefined") {
    throw new RampartWidgetError("no_browser", "", NO_BROWSER);
  }
  checkOptions(options);
  const scriptUrl = scriptUrlOf(options.widgetServer);
  const api = apis[scriptUrl] || (apis[scriptUrl] = createApi(scriptUrl));
  return api.render(options);
}
