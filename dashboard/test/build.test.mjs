// The built page (dist/): the 60 KB gzip budget, a deterministic build equal to the committed
// one (drift check), one HTML file whose one script and one style are exactly what csp.txt
// allows by hash (no other script, style, handler or outside URL), nothing that stores or logs
// secrets, and the colour contrast of both themes.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { gzipSync } from "node:zlib";
import { DASHBOARD_DIR, DIST_DIR } from "./helpers.mjs";

const BUDGET = 60 * 1024;
const FILES = ["csp.txt", "index.html"];
const html = readFileSync(join(DIST_DIR, "index.html"), "utf8");
const csp = readFileSync(join(DIST_DIR, "csp.txt"), "utf8");
const inline = (tag) => {
  const found = [...html.matchAll(new RegExp(`<${tag}([^>]*)>([\\s\\S]*?)</${tag}>`, "g"))];
  assert.equal(found.length, 1, `one ${tag} element`);
  assert.equal(found[0][1], "", `the ${tag} element has no attributes`);
  return found[0][2];
};
const script = inline("script");
const style = inline("style");

const scratch = mkdtempSync(join(tmpdir(), "rampart-dashboard-build-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
const build = (dir) => execFileSync(process.execPath, [join(DASHBOARD_DIR, "scripts", "build.mjs"), dir], { stdio: "pipe" });

test(`index.html is at most ${BUDGET} bytes with gzip -9`, () => {
  const size = gzipSync(html, { level: 9 }).length;
  assert.ok(size <= BUDGET, `${size} bytes gzip -9`);
});

test("the build is deterministic and dist/ is up to date with src/", () => {
  build(join(scratch, "a"));
  build(join(scratch, "b"));
  assert.deepEqual(readdirSync(DIST_DIR).sort(), FILES, "dist/ holds the page and its policy, nothing else");
  for (const file of FILES) {
    const a = readFileSync(join(scratch, "a", file));
    assert.ok(a.equals(readFileSync(join(scratch, "b", file))), `${file}: two builds give the same bytes`);
    assert.ok(a.equals(readFileSync(join(DIST_DIR, file))), `${file}: dist/ is the build of src/ (run npm run build)`);
  }
});

test("index.html: lang, viewport, noscript, the script last, nothing inline but the hashed script and style", () => {
  assert.match(html, /^<!doctype html>\n<html lang="en">/);
  assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  assert.match(html, /<meta charset="utf-8">/);
  assert.match(html, /<noscript><p>[^<]+<\/p><\/noscript>/);
  assert.ok(html.indexOf('<div id="app"></div>') < html.indexOf("<script>"), "the script runs once #app is parsed");
  const markup = html.replace(script, "").replace(style, "");
  assert.doesNotMatch(markup, /\sstyle=/i, "no style attribute");
  assert.doesNotMatch(markup, /\son[a-z]+=/i, "no event handler attribute");
  assert.doesNotMatch(markup, /javascript:|<link|\ssrc=/i, "no other file, no script URL");
  assert.doesNotMatch(markup, /https?:\/\//, "no outside URL");
});

test("csp.txt allows exactly the page's script and style by their sha384", () => {
  const hash = (text) => "'sha384-" + createHash("sha384").update(text, "utf8").digest("base64") + "'";
  assert.equal(csp, `script-src ${hash(script)}; style-src ${hash(style)}\n`);
  assert.doesNotMatch(csp, /unsafe|'self'|\*/);
});

test("the script: ASCII, ES2019, its banner, only same-origin requests, no storage, cookie, console or eval", () => {
  assert.ok(script.startsWith("/* Rampart partner dashboard. Built from dashboard/src by esbuild; do not edit. */"));
  assert.ok(/^[\x09\x0a\x20-\x7e]*$/.test(script), "the script is ASCII");
  assert.ok(!/\?\?|\?\.[^0-9]/.test(script.replace(/"(?:[^"\\]|\\.)*"/g, '""')), "no ES2020 operators");
  // Absolute URLs appear only inside the hints' words ("https://..."), never as a string of
  // their own (a request, a link or a frame elsewhere).
  const urls = [...script.matchAll(/https?:\/\/[^\s"'`]*/g)].map((m) => m[0]);
  assert.deepEqual([...new Set(urls)].sort(), ["https://", "https://...", "https://shop.example.com."], "no absolute URL but the hints'");
  assert.doesNotMatch(script, /["'`]https?:/, "no string that is an absolute URL");
  assert.doesNotMatch(script, /\b(localStorage|sessionStorage|indexedDB|document\.cookie|console\.|eval\(|new Function|innerHTML|outerHTML|insertAdjacentHTML|document\.write)\b/);
  assert.ok(script.includes('"/v1/dashboard"'), "requests go to /v1/dashboard/...");
  assert.ok(style.startsWith("/* Rampart partner dashboard. Built from dashboard/src/app.css by esbuild; do not edit. */"));
  assert.doesNotMatch(style, /@import|@font-face|url\(/i, "no font, image or import");
  assert.match(style, /@media ?\(prefers-color-scheme: ?dark\)/, "the dark theme follows the system");
  assert.match(style, /:focus-visible/);
});

/** WCAG relative luminance and contrast. */
function luminance(hex) {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

test("both themes: every text/background pair has contrast >= 4.5:1, as the comment states", () => {
  const source = readFileSync(join(DASHBOARD_DIR, "src", "app.css"), "utf8");
  const block = (at) => {
    const start = source.indexOf(":root {", at);
    const body = source.slice(start, source.indexOf("}", start));
    return Object.fromEntries([...body.matchAll(/--([a-z-]+):\s*(#[0-9a-f]{6});/g)].map((m) => [m[1], m[2]]));
  };
  const themes = { light: block(0), dark: block(source.indexOf("@media (prefers-color-scheme: dark)")) };
  assert.ok(source.indexOf("@media (prefers-color-scheme: dark)") > 0);
  const pairs = /\n\s+contrast:([a-z/\s-]+)\*\//.exec(source)[1].trim().split(/\s+/).map((p) => p.split("/"));
  assert.ok(pairs.length >= 13);
  for (const [name, theme] of Object.entries(themes)) {
    for (const [fg, bg] of pairs) {
      assert.ok(theme[fg] && theme[bg], `${name} defines --${fg} and --${bg}`);
      const ratio = contrast(theme[fg], theme[bg]);
      assert.ok(ratio >= 4.5, `${name}: --${fg} on --${bg} is ${ratio.toFixed(2)}:1`);
      assert.ok(source.includes(ratio.toFixed(2)), `${name}: the comment states ${ratio.toFixed(2)} for ${fg}/${bg}`);
    }
  }
});
