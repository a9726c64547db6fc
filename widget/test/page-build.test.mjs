// The built widget page: the 60 KB gzip budget (SPEC 6.1), an HTML shell a strict CSP allows
// (`script-src 'self'; style-src 'self'`: no inline script, style or handler), the integrity of
// the files it loads, no third-party request, and the colour contrast of both themes.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { DIST_DIR, WIDGET_DIR } from "./helpers.mjs";

const BUDGET = 60 * 1024;
const html = readFileSync(join(DIST_DIR, "index.html"), "utf8");
const js = readFileSync(join(DIST_DIR, "page.js"));
const css = readFileSync(join(DIST_DIR, "page.css"));

test(`the page (index.html + page.js + page.css) is at most ${BUDGET} bytes with gzip -9`, () => {
  const size = [html, js, css].reduce((sum, file) => sum + gzipSync(file, { level: 9 }).length, 0);
  assert.ok(size <= BUDGET, `${size} bytes gzip -9`);
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
  const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.equal(scripts.length, 1);
  assert.equal(scripts[0][2], "", "the script element is empty");
  assert.match(scripts[0][1], /^ src="page\.js" integrity="sha384-[A-Za-z0-9+/]{64}" defer$/);
  assert.doesNotMatch(html, /https?:\/\//, "only relative, same-origin files");
});

test("index.html loads page.js and page.css with their sha384 integrity", () => {
  const sri = (bytes) => "sha384-" + createHash("sha384").update(bytes).digest("base64");
  assert.ok(html.includes(`<script src="page.js" integrity="${sri(js)}" defer></script>`));
  assert.ok(html.includes(`<link rel="stylesheet" href="page.css" integrity="${sri(css)}">`));
});

test("page.js and page.css request nothing else: no URL, import, font or image", () => {
  const script = js.toString("utf8");
  assert.ok(/^[\x09\x0a\x20-\x7e]*$/.test(script), "page.js is ASCII");
  const urls = [...script.matchAll(/https?:\/\/[^"'\s]*/g)].map((m) => m[0]);
  assert.deepEqual([...new Set(urls)].sort(), ["http://127.0.0.1", "http://localhost"], "only the sandbox's local origins (the origin rule)");
  assert.ok(!/\?\?|\?\.[^0-9]/.test(script.replace(/"(?:[^"\\]|\\.)*"/g, '""')), "no ES2020 operators");
  assert.doesNotMatch(script, /\b(require|process|module\.exports|XMLHttpRequest|WebSocket|importScripts|localStorage|sessionStorage|document\.cookie)\b/);
  const fetches = [...script.matchAll(/"\.\.\/v1\/widget\/[a-z]+[^"]*"/g)].map((m) => m[0]);
  assert.deepEqual([...new Set(fetches)].sort(), ['"../v1/widget/check?target=url"', '"../v1/widget/config?publicKey="', '"../v1/widget/session"']);
  // The session's routes, relative to "../v1/widget/session".
  for (const path of ["/email", "/signin", "/2fa/verify", "/2fa/create", "/2fa/enable", "/2fa/recoveryCodes", "/kyc", "/orders"]) assert.ok(script.includes(`"${path}"`), path);
  const style = css.toString("utf8");
  assert.doesNotMatch(style, /@import|@font-face|url\(/i);
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
  const source = readFileSync(join(WIDGET_DIR, "src/page/page.css"), "utf8");
  const block = (selector) => {
    const at = source.indexOf(selector + " {");
    const body = source.slice(at, source.indexOf("}", at));
    return Object.fromEntries([...body.matchAll(/--([a-z-]+):\s*(#[0-9a-f]{6});/g)].map((m) => [m[1], m[2]]));
  };
  const themes = { light: block(":root"), dark: block(':root[data-theme="dark"]') };
  const pairs = /\n\s+contrast:([a-z/\s-]+)\*\//.exec(source)[1].trim().split(/\s+/).map((p) => p.split("/"));
  assert.ok(pairs.length >= 10);
  for (const [name, theme] of Object.entries(themes)) {
    for (const [fg, bg] of pairs) {
      assert.ok(theme[fg] && theme[bg], `${name} defines --${fg} and --${bg}`);
      const ratio = contrast(theme[fg], theme[bg]);
      assert.ok(ratio >= 4.5, `${name}: --${fg} on --${bg} is ${ratio.toFixed(2)}:1`);
      // The ratio the comment states for this pair (to 2 decimals) is the real one.
      assert.ok(source.includes(ratio.toFixed(2)), `${name}: the comment states ${ratio.toFixed(2)} for ${fg}/${bg}`);
    }
  }
});

test("the page's CSS is esbuild's minified build of src/page/page.css (dark theme included)", () => {
  const style = css.toString("utf8");
  assert.match(style, /:root\[data-theme=dark\]\{/);
  assert.match(style, /:focus-visible/);
});
