// Builds into OUT_DIR (default dist/):
// - the loader: rampart.js (minified IIFE, ES2019), rampart.js.sri (one line, sha384-<base64>
//   of rampart.js), rampart.d.ts (copied from types/) and envelope.schema.json (from schema/);
// - the widget page: page.js (src/page/main.ts, minified IIFE, ES2019), page.css
//   (src/page/page.css, minified) and index.html (src/page/index.html with the sha384
//   integrity of both filled in; no inline script or style, for a strict CSP).
// `make widget-build` writes widget/dist; `make widget-test` builds into a scratch directory
// and compares it with widget/dist (drift check).
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(process.argv[2] ?? join(here, "dist"));
mkdirSync(out, { recursive: true });

const result = await build({
  absWorkingDir: here,
  entryPoints: ["src/loader.ts"],
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2019",
  minify: true,
  legalComments: "none",
  charset: "ascii",
  banner: { js: "/* Rampart widget loader v1. Built from widget/src by esbuild; do not edit. */" },
  write: false,
  logLevel: "warning",
});
const js = Buffer.from(result.outputFiles[0].contents);
writeFileSync(join(out, "rampart.js"), js);
const sri = "sha384-" + createHash("sha384").update(js).digest("base64");
writeFileSync(join(out, "rampart.js.sri"), sri + "\n");
copyFileSync(join(here, "types", "rampart.d.ts"), join(out, "rampart.d.ts"));
// The message envelope's JSON Schema, beside the declaration partners use.
copyFileSync(join(here, "schema", "envelope.schema.json"), join(out, "envelope.schema.json"));
console.log(`-- built ${join(out, "rampart.js")} (${js.length} bytes, ${sri})`);

const page = await build({
  absWorkingDir: here,
  entryPoints: ["src/page/main.ts"],
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2019",
  minify: true,
  legalComments: "none",
  charset: "ascii",
  banner: { js: "/* Rampart widget page. Built from widget/src/page by esbuild; do not edit. */" },
  write: false,
  logLevel: "warning",
});
const pageJs = Buffer.from(page.outputFiles[0].contents);
const css = await build({
  absWorkingDir: here,
  entryPoints: ["src/page/page.css"],
  bundle: true,
  minify: true,
  target: ["chrome90", "firefox90", "safari14"],
  charset: "ascii",
  banner: { css: "/* Rampart widget page. Built from widget/src/page/page.css by esbuild; do not edit. */" },
  write: false,
  logLevel: "warning",
});
const pageCss = Buffer.from(css.outputFiles[0].contents);
const integrity = (bytes) => "sha384-" + createHash("sha384").update(bytes).digest("base64");
const html = readFileSync(join(here, "src", "page", "index.html"), "utf8")
  .replace("{{PAGE_JS_SRI}}", integrity(pageJs))
  .replace("{{PAGE_CSS_SRI}}", integrity(pageCss));
writeFileSync(join(out, "page.js"), pageJs);
writeFileSync(join(out, "page.css"), pageCss);
writeFileSync(join(out, "index.html"), html);
console.log(`-- built ${join(out, "page.js")} (${pageJs.length} bytes), page.css (${pageCss.length} bytes), index.html`);
