// The widget page's entry (dist/page.js, loaded by dist/index.html with `defer`): it runs before
// the page's load event, so the message listener is in place before the loader's `hello`.

import { App } from "./app";
import type { Fetch } from "./api";

if (typeof window !== "undefined" && typeof document !== "undefined") {
  const nav = (typeof navigator !== "undefined" ? navigator : undefined) as Navigator | undefined;
  new App({
    window,
    document,
    location: window.location,
    fetch: ((url, init) => window.fetch(url, { ...init, credentials: "same-origin", cache: "no-store" })) as Fetch,
    clipboard: nav && nav.clipboard ? nav.clipboard : undefined,
    setTimeout: (fn, ms) => window.setTimeout(fn, ms),
  }).start();
}
