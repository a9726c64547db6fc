// The npm package as a partner gets it: `npm pack` of the built dist/npm (what `make
// widget-pack` does), installed offline from the tarball into a fresh project, then used there:
// `import` and `require` in Node, `tsc --strict` on a consumer (and its misuse refused), and an
// esbuild bundle of a consumer app run in the fake DOM. Everything in a temporary directory.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { browser } from "./fake-dom.mjs";
import { NPM_DIR, WIDGET_DIR, loaderSource } from "./helpers.mjs";

const NAME = "@rampart/widget";
const NPM = process.env.NPM || "npm";
const TSC = join(WIDGET_DIR, "node_modules/typescript/bin/tsc");
const FILES = ["LICENSE", "README.md", "index.cjs", "index.d.cts", "index.d.ts", "index.js", "package.json"];
const PK = "pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc";
const SERVER = "https://widget.example.com";

/** Runs a command to completion; its stdout (fails the test with its output otherwise). */
function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", timeout: 60000 });
  assert.equal(result.status, 0, `${command} ${args.join(" ")}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Runs a command in the background: resolves to {status, output}. */
function start(command, args, cwd) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("close", (status) => resolve({ status, output }));
  });
}

// A consumer in TypeScript (ESM and CommonJS), and lines that must not type-check, each marked.
const GOOD_TS = `import { render, RampartWidgetError, type ErrorCode, type EventType, type FailureCode, type Handle, type LoaderOptions, type WidgetEvent } from "${NAME}";

const options: LoaderOptions = {
  widgetServer: "https://widget.example.com",
  targetContainerId: "buy",
  publicKey: "pk_sandbox_abc",
  environment: "sandbox",
  currencies: "eur",
  receiveAddress: { btc: "bc1q" },
  darkTheme: true,
  width: 360,
  onEvent(event: WidgetEvent) {
    const type: EventType = event.type;
    if (type === "order.completed") console.log(event.payload.orderId, event.instanceId);
    if (type === "error") {
      const code = event.payload.code as FailureCode;
      console.log(code);
    }
  },
};

function explain(code: ErrorCode): string {
  switch (code) {
    case "no_browser":
      return "call render on the client";
    case "container_missing":
    case "container_invalid":
    case "container_in_use":
    case "secret_key":
    case "option_invalid":
    case "script_url_unknown":
      return code;
  }
}

export function mount(): Handle | undefined {
  try {
    const handle = render(options);
    console.log(handle.url, handle.instanceId);
    return handle;
  } catch (e) {
    if (e instanceof RampartWidgetError) console.log(explain(e.code), e.path, e.message);
    return undefined;
  }
}
`;
const GOOD_CTS = `import widget = require("${NAME}");

export function mount(): void {
  const handle: widget.Handle = widget.render({ widgetServer: "https://widget.example.com", targetContainerId: "buy", publicKey: "pk_sandbox_abc" });
  handle.close();
  const error = new widget.RampartWidgetError("no_browser", "", "x");
  console.log(error.code);
}
`;
const MISUSE_TS = `import { render, RampartWidgetError } from "${NAME}";

render({ targetContainerId: "buy", publicKey: "pk_sandbox_abc" }); // misuse: no widgetServer
render({ widgetServer: "https://w.example", targetContainerId: "buy", darkTheme: "yes" }); // misuse: a string for a boolean
render({ widgetServer: "https://w.example", targetContainerId: "buy", currencies: "jpy" }); // misuse: not a currency
render({ widgetServer: "https://w.example", targetContainerId: "buy", colour: "red" }); // misuse: an unknown option
render({ widgetServer: 443, targetContainerId: "buy" }); // misuse: not a string
const handle = render({ widgetServer: "https://w.example", targetContainerId: "buy" });
handle.url = "https://elsewhere.example/"; // misuse: read-only
const code: "timeout" = new RampartWidgetError("no_browser", "", "").code; // misuse: not a failure code
new RampartWidgetError("nope", "", ""); // misuse: not an error code
export { code };
`;

// A partner's app: renders on load into #buy. And one that imports but uses nothing.
const APP_JS = `import { render } from "${NAME}";
window.handle = render({ widgetServer: "${SERVER}", targetContainerId: "buy", publicKey: "${PK}", clientName: "Acme Shop", darkTheme: true });
`;
const UNUSED_JS = `import { render } from "${NAME}";
export const answer = 42;
`;

describe(`npm pack, then npm install --offline of the tarball, then use ${NAME}`, () => {
  let dir, app, tarball, packed, typecheck;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "rampart-widget-pack-"));
    const cache = join(dir, "npm-cache");
    const out = join(dir, "pack");
    app = join(dir, "app");
    mkdirSync(out);
    mkdirSync(app);
    [packed] = JSON.parse(run(NPM, ["pack", NPM_DIR, "--pack-destination", out, "--json", "--cache", cache, "--loglevel=error"], dir));
    tarball = join(out, packed.filename);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    run(NPM, ["install", "--offline", "--no-audit", "--no-fund", "--cache", cache, "--loglevel=error", tarball], app);
    // tsc takes the longest: start it now, the other tests run meanwhile.
    writeFileSync(join(app, "good.ts"), GOOD_TS);
    writeFileSync(join(app, "good.cts"), GOOD_CTS);
    writeFileSync(join(app, "misuse.ts"), MISUSE_TS);
    // No DOM lib (the declaration needs none, so a server-side config takes it) and no @types:
    // `console` is declared here.
    writeFileSync(join(app, "env.d.ts"), "declare const console: { log(...values: unknown[]): void };\n");
    const tsconfig = {
      compilerOptions: { strict: true, noEmit: true, target: "ES2019", lib: ["ES2019"], module: "nodenext", moduleResolution: "nodenext", types: [], skipLibCheck: false },
      files: ["env.d.ts", "good.ts", "good.cts", "misuse.ts"],
    };
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(tsconfig));
    typecheck = start(process.execPath, [TSC, "-p", "tsconfig.json", "--pretty", "false"], app);
  });
  after(async () => {
    if (typecheck) await typecheck;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the tarball holds exactly the package's files", (t) => {
    const listed = run("tar", ["-tzf", tarball], dir).trim().split("\n").sort();
    assert.deepEqual(listed, FILES.map((f) => "package/" + f).sort());
    assert.equal(packed.name, NAME);
    assert.equal(packed.filename, "rampart-widget-0.1.0.tgz");
    const size = statSync(tarball).size;
    const module = readFileSync(join(NPM_DIR, "index.js"));
    t.diagnostic(`${packed.filename}: ${size} bytes; index.js ${module.length} bytes, ${gzipSync(module, { level: 9 }).length} bytes gzip (zlib level 9)`);
  });

  test("the installed package.json: name, version, ESM, no dependencies, exports with types first", () => {
    const installed = join(app, "node_modules", NAME);
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    const widgetVersion = JSON.parse(readFileSync(join(WIDGET_DIR, "package.json"), "utf8")).version;
    assert.equal(manifest.name, NAME);
    assert.equal(manifest.version, widgetVersion);
    assert.equal(manifest.type, "module");
    assert.equal(manifest.sideEffects, false);
    assert.equal(manifest.license, "Apache-2.0");
    assert.equal(manifest.private, undefined);
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies", "scripts"]) assert.equal(manifest[field], undefined, field);
    const root = manifest.exports["."];
    assert.deepEqual(Object.keys(root), ["import", "require"]);
    assert.deepEqual(root.import, { types: "./index.d.ts", default: "./index.js" });
    assert.deepEqual(root.require, { types: "./index.d.cts", default: "./index.cjs" });
    assert.equal(readFileSync(join(installed, "LICENSE"), "utf8"), readFileSync(join(WIDGET_DIR, "..", "LICENSE"), "utf8"));
  });

  const PROBE = `const before = Object.getOwnPropertyNames(globalThis).length;
  let thrown;
  try { m.render({ widgetServer: "${SERVER}", targetContainerId: "buy", publicKey: "${PK}" }); } catch (e) { thrown = [e instanceof m.RampartWidgetError, e.code, e.message]; }
  console.log(JSON.stringify({ keys: Object.keys(m).sort(), thrown, globals: Object.getOwnPropertyNames(globalThis).length - before }));`;
  const NO_BROWSER = [true, "no_browser", "render needs a browser: call it on the client (after mount), not during server-side rendering."];

  test("import() in Node: no throw, no global, render throws no_browser", () => {
    const out = run(process.execPath, ["--input-type=module", "-e", `import("${NAME}").then((m) => { ${PROBE} });`], app);
    assert.deepEqual(JSON.parse(out), { keys: ["RampartWidgetError", "render"], thrown: NO_BROWSER, globals: 0 });
  });

  test("require() in Node: the CommonJS build, the same", () => {
    const out = run(process.execPath, ["--input-type=commonjs", "-e", `const m = require("${NAME}"); ${PROBE}`], app);
    assert.deepEqual(JSON.parse(out), { keys: ["RampartWidgetError", "render"], thrown: NO_BROWSER, globals: 0 });
  });

  test("an esbuild bundle of a consumer app renders rampart.js's iframe; an unused import adds nothing", async (t) => {
    const bundle = async (source, options = {}) => {
      writeFileSync(join(app, "entry.js"), source);
      const result = await build({ absWorkingDir: app, entryPoints: ["entry.js"], bundle: true, format: "iife", platform: "browser", target: "es2019", minify: true, write: false, logLevel: "silent", ...options });
      return result.outputFiles[0].text;
    };
    const appJs = await bundle(APP_JS);
    assert.ok(!appJs.includes("currentScript"), "the global's statement is not in the module");
    const page = browser({ source: "", scriptSrc: null });
    page.document.container("buy");
    const { runInContext } = await import("node:vm");
    runInContext(appJs, page.context);
    const script = browser({ source: loaderSource(), scriptSrc: `${SERVER}/widget/v1/rampart.js` });
    script.document.container("buy");
    const expected = script.window.Rampart.render({ targetContainerId: "buy", publicKey: PK, clientName: "Acme Shop", darkTheme: true });
    assert.equal(page.window.handle.url, expected.url);
    const attributes = (b) => Object.fromEntries(b.document.iframes()[0].attributes);
    assert.deepEqual(attributes(page), attributes(script));
    assert.equal(runInContext("typeof Rampart", page.context), "undefined");
    t.diagnostic(`a consumer app's esbuild bundle (minified): ${appJs.length} bytes, ${gzipSync(appJs, { level: 9 }).length} bytes gzip (zlib level 9)`);

    const unused = await bundle(UNUSED_JS, { format: "esm" });
    assert.ok(!/rampart|iframe|widgetServer/i.test(unused), `an unused import adds nothing (no top-level side effect):\n${unused}`);
  });

  test("tsc --strict (module nodenext, no DOM lib): the consumer type-checks (ESM and require), each misuse does not", async () => {
    const { status, output } = await typecheck;
    assert.notEqual(status, 0, "the misuse file must fail");
    const errors = output
      .split("\n")
      .filter((line) => /error TS\d+/.test(line))
      .map((line) => /^(.*?)\((\d+),\d+\): error (TS\d+)/.exec(line) ?? [line, line, "?", "?"]);
    const lines = MISUSE_TS.split("\n");
    const marked = lines.map((text, i) => (text.includes("// misuse") ? i + 1 : 0)).filter(Boolean);
    assert.deepEqual(errors.filter(([, file]) => file !== "misuse.ts").map(([line]) => line), [], output);
    assert.deepEqual([...new Set(errors.map(([, , line]) => Number(line)))].sort((a, b) => a - b), marked, output);
  });
});
