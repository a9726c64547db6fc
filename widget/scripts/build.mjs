// Builds into OUT_DIR (default dist/):
// - the loader: rampart.js (minified IIFE, ES2019), rampart.js.sri (one line, sha384-<base64>
//   of rampart.js), rampart.d.ts (copied from types/) and envelope.schema.json (from schema/);
// - the widget page: page.js (src/page/main.ts, minified IIFE, ES2019), page.css
//   (src/page/page.css, minified) and index.html (src/page/index.html with the sha384
//   integrity of both filled in; no inline script or style, for a strict CSP);
// - the npm package @rampart/widget, ready to pack (`make widget-pack`), in npm/: the loader as
//   a module (src/module.ts: ESM index.js, CommonJS index.cjs, ES2019, not minified), the
//   hand-written package.json, README.md and index.d.ts of widget/npm/ (index.d.ts also as
//   index.d.cts, for `require`), and the repository's LICENSE.
// `make widget-build` writes widget/dist; `make widget-test` builds into a scratch directory
// and compares it with widget/dist (drift check).
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
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

// The npm package. The module is loader.ts without its SCRIPT_ONLY statement (the global), so
// it is the same code as rampart.js; partners' bundlers minify, so it stays readable here.
const npmOut = join(out, "npm");
mkdirSync(npmOut, { recursive: true });
for (const [format, file] of [["esm", "index.js"], ["cjs", "index.cjs"]]) {
  const module = await build({
    absWorkingDir: here,
    entryPoints: ["src/module.ts"],
    bundle: true,
    format,
    platform: "neutral",
    target: "es2019",
    dropLabels: ["SCRIPT_ONLY"],
    legalComments: "none",
    charset: "ascii",
    banner: { js: "/* @rampart/widget: the Rampart widget loader as a module. Built from widget/src by esbuild; do not edit. */" },
    write: false,
    logLevel: "warning",
  });
  writeFileSync(join(npmOut, file), module.outputFiles[0].contents);
}
for (const file of ["package.json", "README.md", "index.d.ts"]) copyFileSync(join(here, "npm", file), join(npmOut, file));
copyFileSync(join(here, "npm", "index.d.ts"), join(npmOut, "index.d.cts"));
copyFileSync(join(here, "..", "LICENSE"), join(npmOut, "LICENSE"));
console.log(`-- built ${npmOut} (index.js ${statSync(join(npmOut, "index.js")).size} bytes, index.cjs, index.d.ts, package.json, README.md, LICENSE)`);
