// The loader as a module for partners who bundle their front end: the npm package
// @rampart/widget (sources in widget/npm/, built into dist/npm/ as index.js and index.cjs).
// It is rampart.js's code: the checks, the iframe, the handshake and the canonical URL are
// loader.ts's and url.ts's. Two differences only:
// - no global: the build drops loader.ts's SCRIPT_ONLY statement, so importing this module
//   defines nothing and touches nothing, in a browser or in Node (server-side rendering);
// - the widget server is an option. rampart.js learns it from its own URL
//   (`document.currentScript`, `<base>/widget/v1/rampart.js`); a bundled module cannot, so
//   `render` takes `widgetServer`, the server's public base URL, turns it into the script URL
//   the server would serve and derives the root from that exactly as rampart.js does
//   (`widgetRoot`: `<base>/widget/`). It is never written into the iframe's URL (the canonical
//   query names only the widget options).
//
// The declaration partners get is widget/npm/index.d.ts; test/types/module-check.ts keeps it
// and this file in agreement.

import { checkOptions, createApi, RampartWidgetError, type Handle, type LoaderOptions as ScriptOptions, type RampartApi } from "./loader";
import { encode } from "./url";

export { RampartWidgetError };
export type { ErrorCode, FailureCode, Handle, WidgetEvent } from "./loader";
export type { PageMessageType as EventType } from "./envelope";

/** `render`'s options: the script's (SPEC section 4, `onEvent`, `width`, `height`) and the server. */
export interface LoaderOptions extends ScriptOptions {
  /**
   * The widget server's public base URL, e.g. `https://widget.example.com` (its `--public-url`):
   * the page opens at `<widgetServer>/widget/`. http or https, no user name, password, query or
   * fragment; a path is kept (`https://example.com/pay` opens `https://example.com/pay/widget/`).
   */
  widgetServer: string;
}

const NO_BROWSER = "render needs a browser: call it on the client (after mount), not during server-side rendering.";

// One loader API per widget server, made on first use: the script URL rampart.js would have
// there is its key. (A container is "in use" for the API that rendered into it, as for the
// script: render the same widget server into one container, or close the handle first.)
const apis: { [scriptUrl: string]: RampartApi } = {};

function serverInvalid(message: string): RampartWidgetError {
  return new RampartWidgetError("option_invalid", "widgetServer", message);
}

/**
 * `<widgetServer>/widget/v1/rampart.js`, the URL the server serves the loader at, from the
 * checked base URL. Throws `option_invalid` (path `widgetServer`) with a message that never
 * holds the value.
 */
function scriptUrlOf(widgetServer: unknown): string {
  if (widgetServer === undefined) {
    throw serverInvalid("widgetServer is required: the widget server's base URL, e.g. https://widget.example.com.");
  }
  let base: URL | undefined;
  try {
    // No white space or control character (the URL parser would drop some), no `?` or `#`
    // (even empty), Unicode text; then a URL the WHATWG parser accepts.
    if (typeof widgetServer === "string" && /^https?:\/\/[^\s?#\u0000-\u001f\u007f]+$/i.test(widgetServer) && encode(widgetServer)) {
      base = new URL(widgetServer);
    }
  } catch {
    base = undefined;
  }
  if (!base || base.username || base.password) {
    throw serverInvalid(
      "widgetServer must be the widget server's base URL: http or https, with no user name, password, query or fragment (e.g. https://widget.example.com).",
    );
  }
  const href = base.href.replace(/\/?$/, "/");
  // The root or the loader's own URL given for the base would open <root>/widget/widget/.
  if (/\/widget\/(v1\/)?$|\.js\/$/.test(href)) {
    throw serverInvalid("widgetServer must be the widget server's base URL, without /widget/: render adds it.");
  }
  return href + "widget/v1/rampart.js";
}

/**
 * Puts the widget into `options.targetContainerId`, as `Rampart.render` of rampart.js does, on
 * `options.widgetServer`. Throws `RampartWidgetError`: `no_browser` where there is no `window`
 * and `document` (checked first), then the script's checks, then `widgetServer`.
 */
export function render(options: LoaderOptions): Handle {
  if (typeof window === "undefined" || typeof document === "undefined") {
    throw new RampartWidgetError("no_browser", "", NO_BROWSER);
  }
  checkOptions(options);
  const scriptUrl = scriptUrlOf(options.widgetServer);
  const api = apis[scriptUrl] || (apis[scriptUrl] = createApi(scriptUrl));
  return api.render(options);
}
