// Builds the dashboard page into OUT_DIR (default dist/):
// - app.js: src/main.ts bundled (with the widget's dom.ts it imports), minified IIFE, ES2019,
//   ASCII only;
// - app.css: src/app.css, minified;
// - index.html: src/index.html with the sha384 integrity of both filled in (no inline script
//   or style, for the server's strict CSP).
// The output depends only on the sources and the pinned esbuild, so building twice gives the
// same bytes: the committed dist/ is drift-checked against a fresh build.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(process.argv[2] ?? join(here, "dist"));
mkdirSync(out, { recursive: true });

const script = await build({
  absWorkingDir: here,
  entryPoints: ["src/main.ts"],
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2019",
  minify: true,
  legalComments: "none",
  charset: "ascii",
  banner: { js: "/* Rampart partner dashboard. Built from dashboard/src by esbuild; do not edit. */" },
  write: false,
  logLevel: "warning",
});
const js = Buffer.from(script.outputFiles[0].contents);

const style = await build({
  absWorkingDir: here,
  entryPoints: ["src/app.css"],
  bundle: true,
  minify: true,
  target: ["chrome90", "firefox90", "safari14"],
  charset: "ascii",
  banner: { css: "/* Rampart partner dashboard. Built from dashboard/src/app.css by esbuild; do not edit. */" },
  write: false,
  logLevel: "warning",
});
const css = Buffer.from(style.outputFiles[0].contents);

const integrity = (bytes) => "sha384-" + createHash("sha384").update(bytes).digest("base64");
const html = readFileSync(join(here, "src", "index.html"), "utf8")
  .replace("{{APP_JS_SRI}}", integrity(js))
  .replace("{{APP_CSS_SRI}}", integrity(css));

writeFileSync(join(out, "app.js"), js);
writeFileSync(join(out, "app.css"), css);
writeFileSync(join(out, "index.html"), html);
console.log(`-- built ${join(out, "index.html")}, app.js (${js.length} bytes), app.css (${css.length} bytes)`);
