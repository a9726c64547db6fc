// The page's side of the message envelope (SPEC 6.2; widget/src/envelope.ts and the README).
// The page listens for the loader's `hello` from the moment the script runs (before its load
// event). The first well-formed `hello` from `window.parent` is kept; once the page knows the
// partner's registered origins it decides, from that message's browser-given `event.origin`,
// whether to talk: if so it posts only to that origin through `window.parent` (never `*`), with
// the `instanceId` from `hello` and `seq` from 1. Without a `hello` (a plain iframe, a top-level
// page) or with an origin that is not allowed it posts nothing.
//
// Payloads are fixed shapes: `ready {url}`, `screen {name}`, `resize {height}`,
// `error {code, message}` with the page's own fixed text, `order.created {orderId}`,
// `order.completed` / `order.failed {orderId, status}`. No key, session token, code, 2FA secret,
// email or other user input (beyond the canonical URL) is ever put in a message.

import { ENVELOPE_SOURCE, ENVELOPE_VERSION, envelope } from "../envelope";

/** The window the page runs in, as far as the messenger uses it. */
export interface PageWindow {
  parent: unknown;
  addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
}

interface Target {
  postMessage(message: unknown, targetOrigin: string): void;
}

/** Where the conversation stands. */
export type Link = "none" | "waiting" | "connected" | "refused";

/** The screens the page reports in `screen` messages. */
export type ScreenName =
  | "home"
  | "coin"
  | "amount"
  | "address"
  | "signin"
  | "twofactor"
  | "setup"
  | "review"
  | "confirmation"
  | "options_invalid"
  | "retry"
  | "not_approved";

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The loader's `hello`, or null. The loader's instance ids are 32 lower-case hex digits. */
export function readHello(event: { source?: unknown; origin?: unknown; data?: unknown }, parent: unknown): { origin: string; instanceId: string } | null {
  try {
    const data = event.data;
    if (!isObject(data) || event.source !== parent || typeof event.origin !== "string") return null;
    const { source, version, type, instanceId, seq, payload } = data;
    if (
      source !== ENVELOPE_SOURCE ||
      version !== ENVELOPE_VERSION ||
      type !== "hello" ||
      typeof instanceId !== "string" ||
      !/^[0-9a-f]{32}$/.test(instanceId) ||
      typeof seq !== "number" ||
      !Number.isSafeInteger(seq) ||
      seq < 1 ||
      !isObject(payload)
    ) {
      return null;
    }
    return { origin: event.origin, instanceId };
  } catch {
    return null;
  }
}

export class Messenger {
  private hello: { origin: string; instanceId: string } | null = null;
  private state: Link = "none";
  private seq = 0;
  private lastHeight = -1;
  private readonly parent: unknown;

  /** Starts listening at once. `onHello` runs when the first `hello` arrives. */
  constructor(win: PageWindow, onHello: () => void) {
    this.parent = win.parent;
    // A top-level page is its own parent: nothing embeds it, nothing is ever posted.
    const embedded = win.parent !== win && !!win.parent;
    win.addEventListener("message", (event) => {
      if (!embedded || this.hello) return;
      const hello = readHello(event, this.parent);
      if (!hello) return;
      this.hello = hello;
      this.state = "waiting";
      onHello();
    });
  }

  /** "none" before a `hello`, "waiting" until `connect`, then "connected" or "refused". */
  get link(): Link {
    return this.state;
  }

  /** Decides, once, whether the `hello`'s origin may be talked to. */
  connect(allowed: (origin: string) => boolean): Link {
    if (this.state === "waiting" && this.hello) this.state = allowed(this.hello.origin) ? "connected" : "refused";
    return this.state;
  }

  /** The embedding origin the page talks to (from the loader's hello), or null when it talks to
   * no one (not embedded by the loader, or not yet allowed). */
  get origin(): string | null {
    return this.state === "connected" && this.hello ? this.hello.origin : null;
  }

  private post(type: "ready" | "screen" | "resize" | "error" | "order.created" | "order.completed" | "order.failed", payload: { [key: string]: string | number }): void {
    if (this.state !== "connected" || !this.hello) return;
    try {
      (this.parent as Target).postMessage(envelope(type, this.hello.instanceId, ++this.seq, payload), this.hello.origin);
    } catch {
      // A parent that went away: nothing to tell.
    }
  }

  /** `ready` with the canonical URL the page applied. */
  ready(url: string): void {
    this.post("ready", { url });
  }

  screen(name: ScreenName): void {
    this.post("screen", { name });
  }

  /** `resize` when `height` (whole CSS pixels) differs from the last one sent. */
  resize(height: number): void {
    const whole = Math.ceil(height);
    if (this.state !== "connected" || !(whole > 0) || whole === this.lastHeight) return;
    this.lastHeight = whole;
    this.post("resize", { height: whole });
  }

  /** `order.created {orderId}`, then `order.completed` or `order.failed` `{orderId, status}`
   * for an order in that final status (an order still "created" gets only the first). */
  order(orderId: string, status: string): void {
    this.post("order.created", { orderId });
    if (status === "completed") this.post("order.completed", { orderId, status });
    else if (status === "failed") this.post("order.failed", { orderId, status });
  }

  /** `error` with a code and the page's fixed message. */
  error(code: "not_approved", message: string): void {
    this.post("error", { code, message });
  }
}
