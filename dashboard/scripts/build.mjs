// Builds the dashboard page into OUT_DIR (default dist/):
// - index.html: src/index.html with src/app.css (minified) in its one <style> and src/main.ts
//   (bundled with the widget's dom.ts it imports; minified IIFE, ES2019, ASCII only) in its one
//   <script> at the end of <body>: the whole page in one response, so the first page costs the
//   HTML's round trip and the API's, not a third for the files;
// - csp.txt: the `script-src` and `style-src` directives the server sends with it, allowing
//   exactly that script and that style by their sha384 (no 'unsafe-inline', nothing else).
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

// Inline text must not end its element early (nor open a comment the parser would honour).
for (const [what, text, end] of [["script", js.toString("latin1"), /<\/script|<!--/i], ["style", css.toString("latin1"), /<\/style|<!--/i]]) {
  if (end.test(text)) throw new Error(`the built ${what} holds text that would end its element early`);
}
const hash = (bytes) => "'sha384-" + createHash("sha384").update(bytes).digest("base64") + "'";
const template = readFileSync(join(here, "src", "index.html"), "utf8");
for (const mark of ["{{APP_CSS}}", "{{APP_JS}}"]) {
  if (template.split(mark).length !== 2) throw new Error(`src/index.html must hold ${mark} once`);
}
// Split and joined, not String.replace: the script's own "$&" or "$'" must stay as written.
const fill = (text, mark, value) => text.split(mark).join(value);
const html = fill(fill(template, "{{APP_CSS}}", css.toString("latin1")), "{{APP_JS}}", js.toString("latin1"));
const csp = `script-src ${hash(js)}; style-src ${hash(css)}\n`;

writeFileSync(join(out, "index.html"), html, "latin1");
writeFileSync(join(out, "csp.txt"), csp);
console.log(`-- built ${join(out, "index.html")} (${html.length} bytes: script ${js.length}, style ${css.length}) and csp.txt`);
