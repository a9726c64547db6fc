// A small hand-made browser for the widget page: elements and text nodes, attributes, events,
// focus, form controls, a parent window that records what the page posts, and a fake `fetch`
// answering like the example server's /v1/widget/config and /v1/widget/check. The built
// dist/page.js runs in a node:vm context whose globals are these objects. Parsing HTML is not
// implemented on purpose: `innerHTML`, `outerHTML` and `insertAdjacentHTML` throw.
import vm from "node:vm";

class Target {
  constructor() {
    this.listeners = [];
  }
  addEventListener(type, fn) {
    this.listeners.push({ type, fn });
  }
  removeEventListener(type, fn) {
    this.listeners = this.listeners.filter((l) => !(l.type === type && l.fn === fn));
  }
  dispatch(type, event = {}) {
    const full = { type, target: this, defaultPrevented: false, preventDefault() { this.defaultPrevented = true; }, ...event };
    for (const l of this.listeners.slice()) if (l.type === type) l.fn(full);
    return full;
  }
}

export class Text {
  constructor(text) {
    this.nodeType = 3;
    this.data = String(text);
    this.parentNode = null;
  }
  get textContent() {
    return this.data;
  }
}

const noHtml = () => {
  throw new Error("the page must not parse HTML");
};

export class Element extends Target {
  constructor(tagName, doc) {
    super();
    this.nodeType = 1;
    this.tagName = tagName.toUpperCase();
    this.ownerDocument = doc;
    this.attributes = new Map();
    this.childNodes = [];
    this.parentNode = null;
    this._value = undefined;
    this._checked = undefined;
    this.offsetHeight = 0;
  }
  setAttribute(name, value) {
    this.attributes.set(name, String(value));
  }
  getAttribute(name) {
    return this.attributes.has(name) ? this.attributes.get(name) : null;
  }
  hasAttribute(name) {
    return this.attributes.has(name);
  }
  removeAttribute(name) {
    this.attributes.delete(name);
  }
  get id() {
    return this.getAttribute("id") || "";
  }
  get firstChild() {
    return this.childNodes[0] || null;
  }
  get children() {
    return this.childNodes.filter((n) => n.nodeType === 1);
  }
  appendChild(child) {
    if (child.parentNode) child.parentNode.removeChild(child);
    child.parentNode = this;
    this.childNodes.push(child);
    return child;
  }
  removeChild(child) {
    const at = this.childNodes.indexOf(child);
    if (at < 0) throw new Error("NotFoundError");
    this.childNodes.splice(at, 1);
    child.parentNode = null;
    if (this.ownerDocument.activeElement && !this.ownerDocument.contains(this.ownerDocument.activeElement)) {
      this.ownerDocument.activeElement = this.ownerDocument.body;
    }
    return child;
  }
  get textContent() {
    return this.childNodes.map((n) => n.textContent).join("");
  }
  set textContent(text) {
    for (const child of this.childNodes) child.parentNode = null;
    this.childNodes = [];
    if (text !== "") this.appendChild(new Text(text));
  }
  set innerHTML(_) {
    noHtml();
  }
  get innerHTML() {
    return noHtml();
  }
  set outerHTML(_) {
    noHtml();
  }
  insertAdjacentHTML() {
    noHtml();
  }
  get value() {
    if (this.tagName === "SELECT") {
      const options = this.all().filter((el) => el.tagName === "OPTION");
      const chosen = this._value !== undefined ? options.find((o) => o.value === this._value) : options.find((o) => o.hasAttribute("selected"));
      return (chosen || options[0] || { value: "" }).value;
    }
    if (this._value !== undefined) return this._value;
    return this.getAttribute("value") ?? (this.tagName === "OPTION" ? this.textContent : "");
  }
  set value(v) {
    this._value = String(v);
  }
  get checked() {
    return this._checked !== undefined ? this._checked : this.hasAttribute("checked");
  }
  set checked(v) {
    this._checked = !!v;
  }
  focus() {
    this.ownerDocument.activeElement = this;
  }
  /** A click; on a link with `download`, the download is recorded (`document.downloads`). */
  click() {
    this.dispatch("click");
    if (this.tagName === "A" && this.hasAttribute("download")) this.ownerDocument.downloads.push({ href: this.getAttribute("href"), name: this.getAttribute("download"), attached: this.ownerDocument.contains(this) });
  }
  select() {
    this.ownerDocument.selected = this;
  }
  querySelector() {
    throw new Error("querySelector is not in the fake DOM");
  }
  /** This element and every element under it, in document order. */
  all() {
    const out = [this];
    for (const child of this.children) out.push(...child.all());
    return out;
  }
  closest(tag) {
    for (let el = this; el; el = el.parentNode) if (el.tagName === tag.toUpperCase()) return el;
    return null;
  }
}

export class Document extends Target {
  constructor() {
    super();
    this.documentElement = new Element("html", this);
    this.body = new Element("body", this);
    this.documentElement.appendChild(this.body);
    this.activeElement = this.body;
    this.title = "";
    this.downloads = [];
    const app = this.createElement("div");
    app.setAttribute("id", "app");
    this.body.appendChild(app);
  }
  createElement(tag) {
    return new Element(tag, this);
  }
  createTextNode(text) {
    return new Text(text);
  }
  contains(node) {
    for (let n = node; n; n = n.parentNode) if (n === this.documentElement) return true;
    return false;
  }
  getElementById(id) {
    return this.documentElement.all().find((el) => el.id === id) || null;
  }
  get app() {
    return this.getElementById("app");
  }
  get main() {
    return this.getElementById("main");
  }
}

/** The window that embeds the page: records every postMessage. */
export class ParentWindow {
  constructor() {
    this.posted = [];
  }
  postMessage(data, targetOrigin) {
    if (targetOrigin === "*") throw new Error("posted to *");
    this.posted.push({ data: JSON.parse(JSON.stringify(data)), targetOrigin });
  }
}

/** A JSON answer like the example server's `body_response`. */
export function answer(status, body, headers = {}) {
  return {
    status,
    headers: { get: (name) => headers[name] ?? headers[name.toLowerCase()] ?? null },
    json: async () => body,
  };
}

/**
 * The page (dist/page.js) loaded at `url` in a fake browser.
 * - `parent`: "loader" (a ParentWindow, the default) or "top" (the page is its own parent).
 * - `server(request)`: answers each fetch ({method, url, body, init}); return an answer(), or
 *   throw for a network failure.
 * - `timers`: the page's setTimeout calls, run by `timers.run()`.
 * - `files`: gives the page `Blob` and `URL.createObjectURL` (the download of a text file):
 *   `blobs` maps each object URL made to its text, `revoked` lists those let go.
 */
export function page({ source, url, parent = "loader", server, clipboard, files = false }) {
  const document = new Document();
  const location = new URL(url);
  const requests = [];
  const window = new Target();
  const parentWindow = parent === "top" ? window : new ParentWindow();
  // Timers run only when the test calls `timers.run()` (all due ones, whatever their delay).
  const timers = {
    pending: [],
    run() {
      const due = this.pending.splice(0);
      for (const t of due) t.fn();
      return due.map((t) => t.ms);
    },
  };
  Object.assign(window, {
    setTimeout: (fn, ms) => timers.pending.push({ fn, ms }),
    document,
    location: { href: location.href, origin: location.origin, pathname: location.pathname, search: location.search },
    parent: parentWindow,
    navigator: clipboard ? { clipboard } : {},
    fetch: async (relative, init = {}) => {
      const request = { method: init.method || "GET", url: new URL(relative, location.href).href, body: init.body ? JSON.parse(init.body) : undefined, init };
      requests.push(request);
      return server(request);
    },
  });
  const blobs = new Map();
  const revoked = [];
  if (files) {
    window.Blob = class Blob {
      constructor(parts, options = {}) {
        this.text = parts.join("");
        this.type = options.type;
      }
    };
    window.URL = class URL {
      static createObjectURL(blob) {
        const made = "blob:" + location.origin + "/" + (blobs.size + 1);
        blobs.set(made, { text: blob.text, type: blob.type });
        return made;
      }
      static revokeObjectURL(made) {
        revoked.push(made);
      }
    };
  }
  window.window = window;
  const context = vm.createContext(window);
  vm.runInContext(source, context, { filename: "page.js" });
  /** The loader's hello, as the browser delivers it. */
  const hello = (origin, { instanceId = "0123456789abcdef0123456789abcdef", seq = 1, source: from = parentWindow, data } = {}) =>
    window.dispatch("message", {
      source: from,
      origin,
      data: data ?? { source: "rampart-widget", version: 1, type: "hello", instanceId, seq, payload: {} },
    });
  return { window, document, parent: parentWindow, requests, hello, context, timers, blobs, revoked };
}

/** Lets every pending promise (fetch answers) settle. */
export async function settle() {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Text of an element, white space collapsed. */
export function text(el) {
  return el.textContent.replace(/\s+/g, " ").trim();
}

/** Every element under `root` with this tag. */
export function byTag(root, tag) {
  return root.all().filter((el) => el.tagName === tag.toUpperCase());
}

/** The button under `root` whose text is `label`. */
export function button(root, label) {
  const found = byTag(root, "button").find((b) => text(b) === label);
  if (!found) throw new Error(`no button "${label}" in: ${text(root)}`);
  return found;
}

/** A click as a browser does it: a submit button submits its form. */
export function click(el) {
  el.dispatch("click");
  if (el.tagName === "BUTTON" && el.getAttribute("type") === "submit") {
    const form = el.closest("form");
    if (form) form.dispatch("submit");
  }
}

/** Types into an input (replacing its value). */
export function type(el, value) {
  el.value = value;
  el.dispatch("input");
}
