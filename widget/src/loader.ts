// The widget loader, served at <public-url>/widget/v1/rampart.js (SPEC 6.1): one global
// `Rampart` with `render(options) -> handle` and `RampartWidgetError`. It checks what it can
// without a request, puts ONE iframe on the canonical URL into the partner's container, greets
// the page with `hello` and passes the page's accepted messages to `onEvent`. It requests
// nothing itself: the iframe (on the loader's own origin) is its only traffic.
//
// The declaration partners use is widget/types/rampart.d.ts (copied to dist/rampart.d.ts);
// test/types/api-check.ts keeps it and this file in agreement. The npm module (module.ts) is
// this same code without the global.

import { acceptMessage, envelope, type Payload, type ReceiverState, type PageMessageType } from "./envelope";
import { buildUrl, encode, widgetRoot } from "./url";

/** The iframe's `allow`: core/src/widget/snippet.rs `IFRAME_ALLOW` (a test compares them). */
export const IFRAME_ALLOW = "payment; camera; microphone; clipboard-write";
/** The iframe's `referrerpolicy`: snippet.rs `IFRAME_REFERRER_POLICY`. */
export const IFRAME_REFERRER_POLICY = "strict-origin-when-cross-origin";
/** How long the page has to send `ready` after `render`. */
export const READY_TIMEOUT_MS = 10000;
/** How long a loaded frame has to answer `hello` before it counts as blocked. */
export const ANSWER_TIMEOUT_MS = 3000;

/**
 * The codes `render` throws: `script_url_unknown` only from rampart.js (no `<script src>`),
 * `no_browser` only from the npm module (called where there is no `window`, e.g. during
 * server-side rendering).
 */
export type ErrorCode =
  | "container_missing"
  | "container_invalid"
  | "container_in_use"
  | "secret_key"
  | "option_invalid"
  | "script_url_unknown"
  | "no_browser";

/** The codes of the loader's own `error` events. */
export type FailureCode = "timeout" | "not_approved" | "frame_blocked" | "csp_blocked";

/** What `onEvent` receives. */
export interface WidgetEvent {
  type: PageMessageType;
  payload: Payload;
  instanceId: string;
}

/** SPEC section 4's script options, plus `onEvent`, `width` and `height`. */
export interface LoaderOptions {
  targetContainerId: string;
  publicKey?: string;
  apiKey?: string;
  environment?: string;
  clientName?: string;
  tokens?: string;
  homeScreenMessage?: string;
  receiveAddress?: { [coin: string]: string };
  darkTheme?: boolean;
  currencies?: string;
  amount?: string;
  showRampartLogo?: boolean;
  width?: number;
  height?: number;
  onEvent?: (event: WidgetEvent) => void;
}

/** What `render` returns. */
export interface Handle {
  /** This widget's random instance id (also in every event). */
  readonly instanceId: string;
  /** The canonical URL the iframe opens. */
  readonly url: string;
  /** Removes the iframe, the fallback link and every listener; safe to call twice. */
  close(): void;
}

/** The global. */
export interface RampartApi {
  render(options: LoaderOptions): Handle;
  RampartWidgetError: typeof RampartWidgetError;
}

/** A misuse `render` reports synchronously. The message never holds an option's value. */
export class RampartWidgetError extends Error {
  readonly code: ErrorCode;
  /** The option at fault (`targetContainerId`, `receiveAddress.btc`), or "" for the whole. */
  readonly path: string;
  constructor(code: ErrorCode, path: string, message: string) {
    super(message);
    this.name = "RampartWidgetError";
    this.code = code;
    this.path = path;
  }
}

type Bag = { [key: string]: unknown };

const SECRET_KEY = /sk_(sandbox|production)_/;
const PUBLISHABLE_KEY = /^pk_(sandbox|production)_[A-Za-z0-9]{1,128}$/;
const TEXT_OPTIONS = ["publicKey", "apiKey", "environment", "clientName", "tokens", "homeScreenMessage", "currencies", "amount"];
const FLAG_OPTIONS = ["darkTheme", "showRampartLogo"];
const MAX_SIZE = 10000;

function isBag(value: unknown): value is Bag {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string that is Unicode (no lone surrogate), as the core requires. */
function isText(value: unknown): value is string {
  try {
    return typeof value === "string" && typeof encode(value) === "string";
  } catch {
    return false;
  }
}

function invalid(path: string, what: string): RampartWidgetError {
  return new RampartWidgetError("option_invalid", path, (path || "options") + " must be " + what + ".");
}

/**
 * The checks `render` makes before it touches the page, in this order: the options are an
 * object; no string holds a secret key (`secret_key`, checked first so it wins); the types
 * (`option_invalid`); the publishable key's shape and presence (`option_invalid`, path
 * `publicKey`); `targetContainerId` given and an HTML id (`container_missing` /
 * `container_invalid`). Finding the element is `render`'s. Throws the first problem.
 */
export function checkOptions(options: unknown): asserts options is LoaderOptions {
  if (!isBag(options)) throw invalid("", "an object");
  for (const key of Object.keys(options)) {
    const value = options[key];
    const entries: [string, unknown][] = isBag(value)
      ? Object.keys(value).map((coin): [string, unknown] => [key + "." + coin, value[coin]])
      : [[key, value]];
    for (const [path, text] of entries) {
      const secret = typeof text === "string" && (SECRET_KEY.test(text) || (/^(publicKey|apiKey)$/.test(path) && text.indexOf("sk_") === 0));
      if (secret) {
        throw new RampartWidgetError(
          "secret_key",
          path,
          path + " holds a secret key: pass the publishable key (pk_...) and keep secret keys on your server.",
        );
      }
    }
  }
  const given = (key: string): boolean => options[key] !== undefined;
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
  if (given("publicKey") && !PUBLISHABLE_KEY.test(options.publicKey as string)) {
    throw invalid("publicKey", "a publishable key, pk_sandbox_... or pk_production_...");
  }
  const id = options.targetContainerId;
  if (id === undefined) {
    throw new RampartWidgetError("container_missing", "targetContainerId", "targetContainerId is required.");
  }
  if (typeof id !== "string" || !id || id.length > 128 || /[\s\u0000-\u001f\u007f-\u009f]/.test(id)) {
    throw new RampartWidgetError(
      "container_invalid",
      "targetContainerId",
      "targetContainerId must be an HTML id: 1 to 128 characters, no spaces.",
    );
  }
}

/** 32 hexadecimal digits from the platform's random source. */
function randomId(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  let id = "";
  for (const byte of bytes) id += (byte + 256).toString(16).slice(1);
  return id;
}

const FAILURES: { [code in FailureCode]: string } = {
  timeout: "The widget did not get ready within 10 seconds.",
  not_approved: "This widget is not approved for production yet.",
  frame_blocked: "The widget page refused to load in this page: register this origin in widgetOrigins.",
  csp_blocked: "This page's Content-Security-Policy blocks the widget: allow its origin in frame-src.",
};

/** The loader's API, bound to the URL the loader script was served from. */
export function createApi(scriptUrl: string | undefined): RampartApi {
  // Containers holding a widget, to their iframe.
  const frames = new WeakMap<Element, Element>();

  function render(options: LoaderOptions): Handle {
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
        "A widget is already rendered in this container: close its handle first.",
      );
    }
    if (!scriptUrl) {
      throw new RampartWidgetError("script_url_unknown", "", "Load rampart.js with a <script src> tag from the widget server.");
    }
    const root = widgetRoot(scriptUrl);
    const origin = new URL(root).origin;
    const url = buildUrl(root, options as unknown as Bag);
    const instanceId = randomId();
    const onEvent = options.onEvent;
    const clientName = options.clientName;
    const frame = document.createElement("iframe");
    const state: ReceiverState = { frame: null, origin, instanceId, seq: 0 };
    const timers: { [name: string]: ReturnType<typeof setTimeout> | undefined } = {};
    let sent = 0;
    let ready = false;
    let failure = "";
    let closed = false;
    let link: HTMLAnchorElement | undefined;

    const stop = (name: string): void => clearTimeout(timers[name]);
    const emit = (type: PageMessageType, payload: Payload): void => {
      if (onEvent) onEvent({ type, payload, instanceId });
    };
    const removeLink = (): void => {
      if (link) link.remove();
      link = undefined;
    };
    // A failure leaves a link that opens the canonical URL at the top level; a frame that
    // shows nothing of ours (blocked) is hidden so the container is never a blank box.
    const fail = (code: FailureCode, message: string, report: boolean, hide: boolean): void => {
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

    const onLoad = (): void => {
      // Each page load numbers its messages afresh.
      state.seq = 0;
      const target = frame.contentWindow;
      try {
        if (target) target.postMessage(envelope("hello", instanceId, ++sent, {}), origin);
      } catch {
        // An origin postMessage refuses (a file: loader): the timeout reports it.
      }
      stop("answer");
      if (!ready) timers.answer = setTimeout(() => fail("frame_blocked", "", true, true), ANSWER_TIMEOUT_MS);
    };

    const onMessage = (event: MessageEvent): void => {
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

    const onViolation = (event: SecurityPolicyViolationEvent): void => {
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
    // Through the CSSOM, not a style attribute, so a strict style-src on the partner page allows it.
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
      close(): void {
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
      },
    };
  }

  return { render, RampartWidgetError };
}

/** The loader script's own URL: `document.currentScript` while it first runs. */
function currentScriptUrl(): string | undefined {
  const script = document.currentScript as HTMLScriptElement | null;
  return (script && script.src) || undefined;
}

// Define the global once, and only in a browser: where there is no `window` (server-side
// rendering) the file does nothing; a second copy of the script leaves the first in place.
// SCRIPT_ONLY marks the one statement the npm module (module.ts) leaves out: scripts/build.mjs
// builds it with `dropLabels: ["SCRIPT_ONLY"]`, so importing it defines no global. (A label,
// not a second entry file, keeps rampart.js byte for byte what it was: its SRI is published.)
SCRIPT_ONLY: if (typeof window !== "undefined" && typeof document !== "undefined") {
  const host = window as unknown as { Rampart?: unknown };
  if (!host.Rampart) host.Rampart = Object.freeze(createApi(currentScriptUrl()));
}
