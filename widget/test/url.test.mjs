// url.ts against the shared vectors: every case of tests/vectors/widget/build.json and every
// valid url/script case of validate.json gives the core's exact URL.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { REPO_DIR, importSource, vectors } from "./helpers.mjs";

const { buildUrl, canonicalQuery, encode, widgetRoot, DEFAULT_COINS } = await importSource("url");

/** What the vector's WidgetConfig (null or partial JSON) means for the builder. */
function configOf(config) {
  const c = config ?? {};
  const domain = c.domain ?? "rampart.network";
  // Roots as the url crate serialises them: WHATWG URL, like `new URL(...).href`.
  const roots = {
    production: new URL(c.productionRoot ?? `https://widget.${domain}`).href,
    sandbox: new URL(c.sandboxRoot ?? `https://widget-sandbox.${domain}`).href,
  };
  const brand = c.brand ?? "Rampart";
  const coins = c.coins ? c.coins.map((coin) => coin.symbol) : DEFAULT_COINS;
  return { roots, brand, coins };
}

/** The environment the core picks: the caller's hint, the option, else the key's prefix. */
function environmentOf(c) {
  if (c.environment) return c.environment;
  if (c.options.environment) return c.options.environment;
  const match = /^pk_(sandbox|production)_/.exec(c.options.publicKey ?? "");
  assert.ok(match, `case "${c.name}" names no environment`);
  return match[1];
}

function check(file, c) {
  const config = configOf(file.config ?? c.config);
  const root = config.roots[environmentOf(c)];
  assert.equal(buildUrl(root, c.options, config.brand, config.coins), c.url);
}

describe("build.json", () => {
  const file = vectors("widget/build.json");
  for (const c of file.cases) test(c.name, () => check(file, c));
});

describe("validate.json, valid url and script cases", () => {
  const file = vectors("widget/validate.json");
  const valid = file.cases.filter((c) => typeof c.url === "string" && (c.target === "url" || c.target === "script"));
  test("has cases", () => assert.ok(valid.length >= 10, `${valid.length} cases`));
  for (const c of valid) test(c.name, () => check(file, c));
});

describe("the builder", () => {
  test("root with no options is the root alone, as the core joins it", () => {
    assert.equal(buildUrl("https://w.example/widget/", {}), "https://w.example/widget/");
  });

  test("the encoding set is the core's QUERY_ENCODE_SET", () => {
    const source = readFileSync(join(REPO_DIR, "core/src/widget/urls.rs"), "utf8");
    assert.match(source, /QUERY_ENCODE_SET: &AsciiSet = &NON_ALPHANUMERIC\.remove\(b'-'\)\.remove\(b'\.'\)\.remove\(b'_'\)\.remove\(b'~'\);/);
    for (let code = 0; code < 128; code++) {
      const c = String.fromCharCode(code);
      const keep = /[A-Za-z0-9\-._~]/.test(c);
      assert.equal(encode(c), keep ? c : "%" + code.toString(16).toUpperCase().padStart(2, "0"), `U+${code}`);
    }
    assert.equal(encode("é,"), "%C3%A9%2C");
    assert.throws(() => encode("\ud800"), URIError);
  });

  test("only known options, booleans lower-case, unknown coins after the registry's", () => {
    const query = canonicalQuery({
      showRampartLogo: false,
      colour: "red",
      environment: "sandbox",
      targetContainerId: "w",
      receiveAddress: { zzz: "z", btc: "b", sol: "s" },
      darkTheme: true,
      amount: 5,
    });
    assert.equal(query, "receiveAddressBtc=b&receiveAddressSol=s&receiveAddressZzz=z&darkTheme=true&showRampartLogo=false");
  });

  test("root from the loader's own URL", () => {
    assert.equal(widgetRoot("https://w.example/widget/v1/rampart.js"), "https://w.example/widget/");
    assert.equal(widgetRoot("http://127.0.0.1:8080/widget/v1/rampart.js?x=1#y"), "http://127.0.0.1:8080/widget/");
    assert.equal(widgetRoot("https://pay.example.com:8443/base/widget/v1/rampart.js"), "https://pay.example.com:8443/base/widget/");
  });
});
