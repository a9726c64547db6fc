// The built page (dist/): the 60 KB gzip budget, a deterministic build equal to the committed
// one (drift check), an HTML shell the server's strict CSP allows (no inline script, style or
// handler) loading its files with their sha384 integrity, nothing that stores or logs secrets,
// and the colour contrast of both themes.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { gzipSync } from "node:zlib";
import { DASHBOARD_DIR, DIST_DIR } from "./helpers.mjs";

const BUDGET = 60 * 1024;
const FILES = ["index.html", "app.js", "app.css"];
const html = readFileSync(join(DIST_DIR, "index.html"), "utf8");
const js = readFileSync(join(DIST_DIR, "app.js"));
const css = readFileSync(join(DIST_DIR, "app.css"));

const scratch = mkdtempSync(join(tmpdir(), "rampart-dashboard-build-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
const build = (dir) => execFileSync(process.execPath, [join(DASHBOARD_DIR, "scripts", "build.mjs"), dir], { stdio: "pipe" });

test(`index.html + app.js + app.css are at most ${BUDGET} bytes with gzip -9`, () => {
  const size = [html, js, css].reduce((sum, file) => sum + gzipSync(file, { level: 9 }).length, 0);
  assert.ok(size <= BUDGET, `${size} bytes gzip -9`);
});

test("the build is deterministic and dist/ is up to date with src/", () => {
  build(join(scratch, "a"));
  build(join(scratch, "b"));
  for (const file of FILES) {
    const a = readFileSync(join(scratch, "a", file));
    assert.ok(a.equals(readFileSync(join(scratch, "b", file))), `${file}: two builds give the same bytes`);
    assert.ok(a.equals(readFileSync(join(DIST_DIR, file))), `${file}: dist/ is the build of src/ (run npm run build)`);
  }
});

test("index.html: lang, viewport, noscript, and nothing inline", () => {
  assert.match(html, /^<!doctype html>\n<html lang="en">/);
  assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  assert.match(html, /<meta charset="utf-8">/);
  assert.match(html, /<noscript><p>[^<]+<\/p><\/noscript>/);
  assert.doesNotMatch(html, /<style/i, "no style element");
  assert.doesNotMatch(html, /\sstyle=/i, "no style attribute");
  assert.doesNotMatch(html, /\son[a-z]+=/i, "no event handler attribute");
  assert.doesNotMatch(html, /javascript:/i);
  assert.doesNotMatch(html, /https?:\/\//, "only relative, same-origin files");
  const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.equal(scripts.length, 1);
  assert.equal(scripts[0][2], "", "the script element is empty");
});

test("index.html loads app.js and app.css relatively, with their sha384 integrity", () => {
  const sri = (bytes) => "sha384-" + createHash("sha384").update(bytes).digest("base64");
  assert.ok(html.includes(`<script src="app.js" integrity="${sri(js)}" defer></script>`));
  assert.ok(html.includes(`<link rel="stylesheet" href="app.css" integrity="${sri(css)}">`));
});

test("app.js: ASCII, ES2019, its banner, only same-origin requests, no storage, cookie, console or eval", () => {
  const script = js.toString("utf8");
  assert.ok(script.startsWith("/* Rampart partner dashboard. Built from dashboard/src by esbuild; do not edit. */"));
  assert.ok(/^[\x09\x0a\x20-\x7e]*$/.test(script), "app.js is ASCII");
  assert.ok(!/\?\?|\?\.[^0-9]/.test(script.replace(/"(?:[^"\\]|\\.)*"/g, '""')), "no ES2020 operators");
  // Absolute URLs appear only inside the hints' words ("https://..."), never as a string of
  // their own (a request, a link or a frame elsewhere).
  const urls = [...script.matchAll(/https?:\/\/[^\s"'`]*/g)].map((m) => m[0]);
  assert.deepEqual([...new Set(urls)].sort(), ["https://", "https://...", "https://shop.example.com."], "no absolute URL but the hints'");
  assert.doesNotMatch(script, /["'`]https?:/, "no string that is an absolute URL");
  assert.doesNotMatch(script, /\b(localStorage|sessionStorage|indexedDB|document\.cookie|console\.|eval\(|new Function|innerHTML|outerHTML|insertAdjacentHTML|document\.write)\b/);
  assert.ok(script.includes('"/v1/dashboard"'), "requests go to /v1/dashboard/...");
  const style = css.toString("utf8");
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
