// The dashboard's entry (the script inside dist/index.html, after `#app`): the app with the
// browser's fetch, clipboard and a Blob download.

import { App } from "./app";

/** Offers `text` as the download `name`: a Blob URL (naming no content) through a link clicked
 * at once, then let go. */
function save(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "text/plain;charset=utf-8" }));
  const link = document.createElement("a");
  link.setAttribute("href", url);
  link.setAttribute("download", name);
  link.setAttribute("hidden", "");
  document.body.appendChild(link);
  link.click();
  document.body.removeChild(link);
  window.setTimeout(() => URL.revokeObjectURL(url), 1000);
}

if (typeof window !== "undefined" && typeof document !== "undefined") {
  const clipboard = typeof navigator !== "undefined" && navigator.clipboard ? navigator.clipboard : undefined;
  new App({
    window,
    history: window.history,
    document,
    location: window.location,
    fetch: (url, init) => window.fetch(url, init),
    clipboard,
    save: typeof Blob === "function" && typeof URL.createObjectURL === "function" ? save : undefined,
  }).start();
}
