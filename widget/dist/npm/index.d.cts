// @rampart/widget: the Rampart purchase widget's loader as a module. The same code as
// <widget server>/widget/v1/rampart.js (whose global is declared by rampart.d.ts), without the
// global: `render` takes the widget server as the option `widgetServer`.
// Hand-written; widget/test/types/module-check.ts keeps it in agreement with the source.

/** The messages the widget page sends, passed to `onEvent` (envelope version 1). */
export type EventType =
  | "ready"
  | "screen"
  | "resize"
  | "order.created"
  | "order.completed"
  | "order.failed"
  | "close"
  | "error";

/**
 * The codes `render` throws, as `RampartWidgetError.code`. `no_browser`: called where there is
 * no `window` (server-side rendering). `script_url_unknown` is rampart.js's only; the module
 * never throws it.
 */
export type ErrorCode =
  | "container_missing"
  | "container_invalid"
  | "container_in_use"
  | "secret_key"
  | "option_invalid"
  | "script_url_unknown"
  | "no_browser";

/** The loader's own failures, as `{type: "error", payload: {code, message}}` events. */
export type FailureCode = "timeout" | "not_approved" | "frame_blocked" | "csp_blocked";

/**
 * One accepted message. Events are hints: confirm an order server-side
 * (`GET /v1/widget/orders/{id}` with the secret key).
 */
export interface WidgetEvent {
  type: EventType;
  /**
   * `ready`: `{url}`; `screen`: `{name}` (`home`, `coin`, `amount`, `address`, `signin`,
   * `twofactor`, `setup`, `review`, `confirmation`, `options_invalid`, `retry`); `resize`:
   * `{height}`; `order.created`: `{orderId}`; `order.completed` / `order.failed`:
   * `{orderId, status}`; `error`: `{code, message}`.
   */
  payload: { [key: string]: unknown };
  instanceId: string;
}

/** The widget options (SPEC section 4, script form), `onEvent`, `width`, `height` and the server. */
export interface LoaderOptions {
  /**
   * The widget server's public base URL, e.g. `"https://widget.example.com"`: the widget opens
   * at `<widgetServer>/widget/`. http or https, with no user name, password, query or fragment.
   * Not sent to the widget (it is not in the iframe's URL).
   */
  widgetServer: string;
  /** The id of the element the iframe goes into. */
  targetContainerId: string;
  /** The publishable key, `pk_sandbox_...` or `pk_production_...`; never a secret key. */
  publicKey?: string;
  /** Deprecated legacy key (the partner's UUID). */
  apiKey?: string;
  environment?: "sandbox" | "production";
  /** Shown in the widget; also names the iframe's title. */
  clientName?: string;
  /** Comma-delimited lower-case coin symbols, e.g. `"btc,eth"`. */
  tokens?: string;
  homeScreenMessage?: string;
  /** Coin symbol to receive address, e.g. `{btc: "bc1q..."}`. */
  receiveAddress?: { [coin: string]: string };
  darkTheme?: boolean;
  currencies?: "usd" | "eur" | "gbp";
  /** A plain decimal string, e.g. `"50"` or `"49.99"`. */
  amount?: string;
  showRampartLogo?: boolean;
  /** Iframe width in CSS pixels; default 420 (it never grows past its container). */
  width?: number;
  /** Iframe height in CSS pixels; default 550. */
  height?: number;
  onEvent?: (event: WidgetEvent) => void;
}

export interface Handle {
  /** This widget's random instance id, also in every event. */
  readonly instanceId: string;
  /** The canonical URL the iframe opens. */
  readonly url: string;
  /** Removes the iframe, the fallback link and the listeners; safe to call twice. */
  close(): void;
}

/**
 * Puts the widget into `options.targetContainerId`. Call it in the browser, after the container
 * exists (in an effect or `onMounted`), and `close()` the handle when the container goes away.
 * Throws `RampartWidgetError` on misuse (`no_browser` during server-side rendering).
 */
export declare function render(options: LoaderOptions): Handle;

/** A misuse `render` reports synchronously; the message never holds an option's value. */
export declare class RampartWidgetError extends Error {
  readonly code: ErrorCode;
  /** The option at fault, e.g. `targetContainerId`, `widgetServer` or `receiveAddress.btc`; "" for the whole. */
  readonly path: string;
  constructor(code: ErrorCode, path: string, message: string);
}
