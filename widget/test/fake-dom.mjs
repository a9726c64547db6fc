// A tiny hand-made browser for the loader tests: just the DOM, window, timers and crypto the
// loader touches, recording what it does. The built rampart.js runs in a node:vm context whose
// globals are these objects, so the tests exercise the shipped file, not a copy.
import { webcrypto } from "node:crypto";
import vm from "node:vm";

export class FakeTarget {
  constructor() {
    this.listeners = [];
  }
  addEventListener(type, fn) {
    this.listeners.push({ type, fn });
  }
  removeEventListener(type, fn) {
    this.listeners = this.listeners.filter((l) => !(l.type === type && l.fn === fn));
  }
  count(type) {
    return this.listeners.filter((l) => l.type === type).length;
  }
  dispatch(type, event = {}) {
    for (const l of this.listeners.slice()) if (l.type === type) l.fn({ type, ...event });
  }
}

/** The window inside an iframe: records what is posted to it. */
export class FakeFrameWindow {
  constructor() {
    this.posted = [];
  }
  postMessage(data, targetOrigin) {
    if (targetOrigin !== "*" && targetOrigin !== "/" && !/^[a-z][a-z0-9+.-]*:/i.test(targetOrigin)) {
      throw new SyntaxError("Invalid target origin");
    }
    this.posted.push({ data: structuredClone(data), targetOrigin });
  }
}

export class FakeElement extends FakeTarget {
  constructor(tagName, ownerDocument) {
    super();
    this.tagName = tagName.toUpperCase();
    this.ownerDocument = ownerDocument;
    this.attributes = new Map();
    this.children = [];
    this.parentNode = null;
    this.style = {};
    this.textContent = "";
    this.contentWindow = null;
  }
  setAttribute(name, value) {
    this.attributes.set(name, String(value));
  }
  getAttribute(name) {
    return this.attributes.has(name) ? this.attributes.get(name) : null;
  }
  get id() {
    return this.getAttribute("id") ?? "";
  }
  appendChild(child) {
    if (child.parentNode) child.remove();
    child.parentNode = this;
    this.children.push(child);
    // A connected iframe gets its browsing context (and window) when it is inserted.
    if (child.tagName === "IFRAME" && !child.contentWindow) child.contentWindow = new FakeFrameWindow();
    this.ownerDocument.log.push(["append", this.id, child.tagName]);
    return child;
  }
  removeChild(child) {
    const at = this.children.indexOf(child);
    if (at < 0) throw new Error("NotFoundError");
    this.children.splice(at, 1);
    child.parentNode = null;
    if (child.tagName === "IFRAME") child.contentWindow = null;
    return child;
  }
  remove() {
    if (this.parentNode) this.parentNode.removeChild(this);
  }
  *walk() {
    yield this;
    for (const child of this.children) yield* child.walk();
  }
}

export class FakeDocument extends FakeTarget {
  /** `scriptSrc` null: no `document.currentScript`. */
  constructor(scriptSrc) {
    super();
    this.log = [];
    this.body = new FakeElement("body", this);
    this.currentScript = scriptSrc === null ? null : { src: scriptSrc };
  }
  createElement(tag) {
    this.log.push(["create", tag]);
    return new FakeElement(tag, this);
  }
  getElementById(id) {
    for (const el of this.body.walk()) if (el !== this.body && el.id === id) return el;
    return null;
  }
  /** A new element with this id in the body. */
  container(id) {
    const el = new FakeElement("div", this);
    el.setAttribute("id", id);
    this.body.appendChild(el);
    return el;
  }
  iframes() {
    return [...this.body.walk()].filter((el) => el.tagName === "IFRAME");
  }
}

/** Timers that run only when the test advances the clock. */
export class FakeClock {
  constructor() {
    this.now = 0;
    this.next = 1;
    this.timers = new Map();
  }
  setTimeout = (fn, ms = 0) => {
    const id = this.next++;
    this.timers.set(id, { at: this.now + ms, fn });
    return id;
  };
  clearTimeout = (id) => {
    this.timers.delete(id);
  };
  advance(ms) {
    const end = this.now + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at || a[0] - b[0]);
      if (due.length === 0) break;
      const [id, timer] = due[0];
      this.timers.delete(id);
      this.now = timer.at;
      timer.fn();
    }
    this.now = end;
  }
  pending() {
    return this.timers.size;
  }
}

/**
 * A browser-like vm context with the loader script evaluated in it (`times` times). The
 * context has no network API at all (no fetch, XMLHttpRequest, Image, WebSocket...), so a
 * request would throw.
 */
export function browser({ scriptSrc = "https://widget.example.com/widget/v1/rampart.js", times = 1, source } = {}) {
  const document = new FakeDocument(scriptSrc);
  const clock = new FakeClock();
  const window = new FakeTarget();
  Object.assign(window, {
    document,
    setTimeout: clock.setTimeout,
    clearTimeout: clock.clearTimeout,
    crypto: { getRandomValues: (bytes) => webcrypto.getRandomValues(bytes) },
    URL,
  });
  window.window = window;
  const context = vm.createContext(window);
  for (let i = 0; i < times; i++) vm.runInContext(source, context, { filename: "rampart.js" });
  return { window, document, clock, context };
}
