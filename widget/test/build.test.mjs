// The built artefacts: the gzip -9 budget (SPEC 6.1: at most 4096 bytes), the .sri line, the
// declaration copied into dist, the npm package's files (dist/npm), and `tsc --noEmit --strict`
// over the sources, the declarations and the checks that they agree (test/types/api-check.ts
// for the global, test/types/module-check.ts for the npm module).
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { DIST_DIR, NPM_DIR, REPO_DIR, WIDGET_DIR } from "./helpers.mjs";

const BUDGET = 4096;
const js = readFileSync(join(DIST_DIR, "rampart.js"));

test(`rampart.js is at most ${BUDGET} bytes with gzip -9`, () => {
  const size = gzipSync(js, { level: 9 }).length;
  assert.ok(size <= BUDGET, `${size} bytes gzip -9`);
  let cli;
  try {
    cli = execFileSync("gzip", ["-9", "-n", "-c"], { input: js }).length;
  } catch {
    return; // no gzip binary: zlib's level 9 above is the same deflate
  }
  assert.ok(cli <= BUDGET, `${cli} bytes (gzip -9 -n)`);
});

test("rampart.js.sri is one line, sha384-<base64> of rampart.js", () => {
  const sri = readFileSync(join(DIST_DIR, "rampart.js.sri"), "utf8");
  assert.match(sri, /^sha384-[A-Za-z0-9+/]{64}\n$/);
  assert.equal(sri.trim(), "sha384-" + createHash("sha384").update(js).digest("base64"));
});

test("rampart.d.ts is types/rampart.d.ts", () => {
  assert.equal(readFileSync(join(DIST_DIR, "rampart.d.ts"), "utf8"), readFileSync(join(WIDGET_DIR, "types/rampart.d.ts"), "utf8"));
});

test("rampart.js is an ES2019 script that names no node or test helper", () => {
  const text = js.toString("utf8");
  assert.ok(/^[\x09\x0a\x20-\x7e]*$/.test(text), "ASCII only");
  assert.ok(!/\?\?|\?\.[^0-9]/.test(text.replace(/"(?:[^"\\]|\\.)*"/g, '""')), "no ES2020 operators");
  assert.ok(!/\b(require|process|module\.exports)\b/.test(text));
});

test("dist/npm is the package: the module, npm/'s hand-written files, the repository's LICENSE", () => {
  assert.deepEqual(readdirSync(NPM_DIR).sort(), ["LICENSE", "README.md", "index.cjs", "index.d.cts", "index.d.ts", "index.js", "package.json"]);
  const read = (path) => readFileSync(path, "utf8");
  for (const file of ["package.json", "README.md", "index.d.ts"]) assert.equal(read(join(NPM_DIR, file)), read(join(WIDGET_DIR, "npm", file)), file);
  assert.equal(read(join(NPM_DIR, "index.d.cts")), read(join(WIDGET_DIR, "npm", "index.d.ts")));
  assert.equal(read(join(NPM_DIR, "LICENSE")), read(join(REPO_DIR, "LICENSE")));
  assert.match(read(join(NPM_DIR, "LICENSE")), /Apache License\s+Version 2\.0/);
  const manifest = JSON.parse(read(join(WIDGET_DIR, "npm", "package.json")));
  assert.equal(manifest.version, JSON.parse(read(join(WIDGET_DIR, "package.json"))).version);
});

test("the npm module is ES2019, ASCII, has no global and no network API", () => {
  for (const file of ["index.js", "index.cjs"]) {
    const text = readFileSync(join(NPM_DIR, file), "utf8");
    assert.ok(/^[\x09\x0a\x20-\x7e]*$/.test(text), `${file}: ASCII only`);
    assert.ok(!/\?\?|\?\.[^0-9]/.test(text.replace(/"(?:[^"\\]|\\.)*"/g, '""')), `${file}: no ES2020 operators`);
    assert.ok(!/currentScript|\.Rampart\b|SCRIPT_ONLY/.test(text), `${file}: the global's statement is dropped`);
    for (const api of ["fetch", "XMLHttpRequest", "sendBeacon", "WebSocket", "EventSource", "import(", "Image"]) assert.ok(!text.includes(api), `${file}: ${api}`);
  }
  assert.match(readFileSync(join(NPM_DIR, "index.js"), "utf8"), /\nexport \{\n {2}RampartWidgetError,\n {2}render\n\};\n$/);
});

test("tsc --noEmit --strict passes on the sources and the declarations (global and npm module)", () => {
  const tsc = join(WIDGET_DIR, "node_modules/typescript/bin/tsc");
  const run = spawnSync(process.execPath, [tsc, "--noEmit", "--strict", "-p", join(WIDGET_DIR, "tsconfig.json")], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stdout + run.stderr);
});
