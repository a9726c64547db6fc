// The widget page's entry (dist/page.js, loaded by dist/index.html with `defer`): it runs before
// the page's load event, so the message listener is in place before the loader's `hello`.

import { App } from "./app";
import type { Fetch } from "./api";

/** Offers `text` as the download `name`: a blob (its URL names no content) through a link
 * clicked at once, then let go. */
function saveFile(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "text/plain;charset=utf-8" }));
  const link = document.createElement("a");
  link.setAttribute("href", url);
  link.setAttribute("download", name);
  document.body.appendChild(link);
  link.click();
  document.body.removeChild(link);
  window.setTimeout(() => URL.revokeObjectURL(url), 1000);
}

if (typeof window !== "undefined" && typeof document !== "undefined") {
  const nav = (typeof navigator !== "undefined" ? navigator : undefined) as Navigator | undefined;
  new App({
    window,
    document,
    location: window.location,
    fetch: ((url, init) => window.fetch(url, { ...init, credentials: "same-origin", cache: "no-store" })) as Fetch,
    clipboard: nav && nav.clipboard ? nav.clipboard : undefined,
    setTimeout: (fn, ms) => window.setTimeout(fn, ms),
    saveFile: typeof Blob === "function" && typeof URL === "function" && typeof URL.createObjectURL === "function" ? saveFile : undefined,
  }).start();
}
