// Rampart widget loader v1: the global `Rampart` defined by <public-url>/widget/v1/rampart.js.
// Reference this file (/// <reference path="rampart.d.ts" />) when the page is TypeScript.

declare namespace Rampart {
  /** The messages the widget page sends, passed to `onEvent` (envelope version 1). */
  type EventType =
    | "ready"
    | "screen"
    | "resize"
    | "order.created"
    | "order.completed"
    | "order.failed"
    | "close"
    | "error";

  /**
   * The codes `render` throws, as `RampartWidgetError.code`. `no_browser` is the npm module's
   * only (@rampart/widget, called during server-side rendering); this script never throws it.
   */
  type ErrorCode =
    | "container_missing"
    | "container_invalid"
    | "container_in_use"
    | "secret_key"
    | "option_invalid"
    | "script_url_unknown"
    | "no_browser";

  /** The loader's own failures, as `{type: "error", payload: {code, message}}` events. */
  type FailureCode = "timeout" | "not_approved" | "frame_blocked" | "csp_blocked";

  /**
   * One accepted message. Events are hints: confirm an order server-side
   * (`GET /v1/widget/orders/{id}` with the secret key).
   */
  interface WidgetEvent {
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

  /** The widget options (SPEC section 4, script form), plus `onEvent`, `width` and `height`. */
  interface Options {
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

  interface Handle {
    /** This widget's random instance id, also in every event. */
    readonly instanceId: string;
    /** The canonical URL the iframe opens. */
    readonly url: string;
    /** Removes the iframe, the fallback link and the listeners. */
    close(): void;
  }

  /** Puts the widget into `options.targetContainerId`; throws `RampartWidgetError` on misuse. */
  function render(options: Options): Handle;

  /** A misuse `render` reports synchronously; the message never holds an option's value. */
  class RampartWidgetError extends Error {
    readonly code: ErrorCode;
    /** The option at fault, e.g. `targetContainerId` or `receiveAddress.btc`. */
    readonly path: string;
    constructor(code: ErrorCode, path: string, message: string);
  }
}

interface Window {
  Rampart: typeof Rampart;
}
