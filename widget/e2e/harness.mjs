// The end-to-end harness: the real rampart-server binary (built by `make widget-e2e`), partners
// made with its CLI, partner pages served by a tiny Node server on other origins, and Debian's
// Chromium driven by playwright-core. Loopback only: the browser may reach 127.0.0.0/8 and
// nothing else (every request is recorded and checked), and every wait is bounded.
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync, mkdirSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";
import { chromium } from "playwright-core";
import { authenticator } from "otplib";

export const E2E_DIR = dirname(fileURLToPath(import.meta.url));
export const WIDGET_DIR = resolve(E2E_DIR, "..");
export const REPO_DIR = resolve(WIDGET_DIR, "..");
const FIXTURES = join(E2E_DIR, "fixtures");

export const CHROMIUM = process.env.RAMPART_E2E_CHROMIUM || "/usr/bin/chromium";
export const SERVER_BIN =
  process.env.RAMPART_E2E_SERVER ||
  join(process.env.CARGO_TARGET_DIR || join(homedir(), ".cache", "rampart-target"), "debug", "rampart-server");
/** `RAMPART_UPDATE_SCREENSHOTS=1` (make widget-screenshots) writes docs/widget/*.png. */
export const UPDATE_SCREENSHOTS = process.env.RAMPART_UPDATE_SCREENSHOTS === "1";
export const SCREENSHOT_DIR = join(REPO_DIR, "docs", "widget");

/** Each test's own limit (the brief: no test longer than about 20 s). */
export const TEST_TIMEOUT = 20000;
/** The longest single wait for something the browser or the server should do at once. */
export const WAIT = 8000;

export const BTC_ADDRESS = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq";
export const ETH_ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";

/** Chromium's flags: headless, no sandbox (root in CI), nothing that phones home, and a host
 * resolver that knows only the loopback names, so no request can leave the machine. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-domain-reliability",
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE 127.0.0.2",
];

/** The server's environment: none of ours (`RAMPART_*`), an explicit log filter. */
function serverEnv() {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith("RAMPART_")) env[name] = value;
  env.RUST_LOG = "info";
  env.USER = env.USER || "e2e";
  return env;
}

/** Runs a CLI command of the binary; its one stdout line as JSON. */
export function cli(args) {
  const out = execFileSync(SERVER_BIN, args, { env: serverEnv(), encoding: "utf8", timeout: 30000, stdio: ["ignore", "pipe", "pipe"] });
  const lines = out.trim().split("\n");
  if (lines.length !== 1) throw new Error(`rampart-server ${args[0]} ${args[1]}: expected one line, got ${JSON.stringify(out)}`);
  return JSON.parse(lines[0]);
}

/** A temporary directory removed by `cleanup`. */
export function tempDir(prefix) {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Starts `rampart-server` on 127.0.0.1 port 0 with a fresh database in `dir` and resolves once
 * its "listening address=" log line is out. `environment` "production" writes a 0600 master
 * key file. `before(db)` runs CLI commands on the database before the start. `args` are more
 * flags (the hidden test hooks `--session-idle-secs N`, `--sign-in-code-ttl-secs N`); `name`
 * names the database file when one directory holds several servers of one environment.
 */
export async function startServer({ dir, environment = "sandbox", before, args: more = [], name = environment } = {}) {
  const db = join(dir, `${name}.db`);
  const args = ["--db", db, "--listen", "127.0.0.1:0", "--environment", environment, ...more];
  if (environment === "production") {
    const keyFile = join(dir, "master.key");
    writeFileSync(keyFile, `1:${"5e".repeat(32)}\n`, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    args.push("--master-key-file", keyFile);
  }
  const made = before ? before(db) : undefined;
  const child = spawn(SERVER_BIN, args, { env: serverEnv(), stdio: ["ignore", "pipe", "pipe"] });
  // A safety net: the server never outlives this test file, whatever happened to `stop`.
  process.once("exit", () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const log = [];
  const address = await new Promise((resolveAddress, reject) => {
    const timer = setTimeout(() => reject(new Error("rampart-server: no listening line within 15 s:\n" + log.join("\n"))), 15000);
    let buffer = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      buffer += chunk;
      let at;
      while ((at = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        log.push(line);
        const match = / listening address=(\S+)/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolveAddress(match[1]);
        }
      }
    });
    child.stdout.resume();
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`rampart-server exited (${code}) before listening:\n${log.join("\n")}`));
    });
  });
  const base = `http://${address}`;
  return {
    base,
    db,
    made,
    log,
    loader: `${base}/widget/v1/rampart.js`,
    pid: child.pid,
    /** SIGTERM, then SIGKILL after 5 s; resolves when it is gone. */
    stop() {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      return new Promise((done) => {
        const kill = setTimeout(() => child.kill("SIGKILL"), 5000);
        child.once("exit", () => {
          clearTimeout(kill);
          done();
        });
        child.kill("SIGTERM");
      });
    },
  };
}

/** `partner create` on `db`: `{superuserId, secretKey, publicKey, environment}`. */
export function createPartner(db, name, environment = "sandbox") {
  return cli(["partner", "create", "--db", db, "--name", name, "--environment", environment]);
}

/** A JSON request to the server with the partner's secret key; the parsed answer. */
export async function api(server, method, path, secretKey, body) {
  const response = await fetch(server.base + path, {
    method,
    headers: { Authorization: `Bearer ${secretKey}`, "Content-Type": "application/json", Accept: "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(WAIT),
  });
  const json = await response.json();
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** Registers the partner's embedding origins. */
export function registerOrigins(server, partner, origins) {
  return api(server, "POST", "/v1/users/widgetOrigins", partner.secretKey, { widgetOrigins: origins });
}

/** A self-signed certificate for 127.0.0.1 (openssl), for an https partner page. */
function certificate(dir) {
  const key = join(dir, "partner.key");
  const cert = join(dir, "partner.crt");
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
    "-addext", "subjectAltName=IP:127.0.0.1",
  ], { stdio: "ignore", timeout: 15000 });
  return { key: readFileSync(key), cert: readFileSync(cert) };
}

/**
 * A partner site: serves `fixtures/` on `host` (a loopback address) port 0 (http, or https with a self-signed
 * certificate), and the files given to `put` (built by a test). A page's `{{LOADER}}` is the
 * loader URL of the widget server named by the query's `server` (a loopback http origin), and
 * `{{Q:name}}` a query value, HTML-escaped.
 */
export async function startPartnerSite({ https = false, dir, host = "127.0.0.1" } = {}) {
  const built = new Map();
  const handler = (req, res) => {
    const url = new URL(req.url, "http://x");
    const name = url.pathname.slice(1) || "partner.html";
    if (!/^[a-z0-9-]+\.(html|js)$/.test(name)) {
      res.writeHead(404).end();
      return;
    }
    if (built.has(name)) {
      const type = name.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/html; charset=utf-8";
      res.writeHead(200, { "Content-Type": type, "Cache-Control": "no-store" });
      res.end(built.get(name));
      return;
    }
    let text;
    try {
      text = readFileSync(join(FIXTURES, name), "utf8");
    } catch {
      res.writeHead(404).end();
      return;
    }
    const server = url.searchParams.get("server") || "";
    if (server && !/^http:\/\/127\.0\.0\.1:[0-9]{1,5}$/.test(server)) {
      res.writeHead(400).end();
      return;
    }
    const escape = (s) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    text = text.replaceAll("{{LOADER}}", escape(server + "/widget/v1/rampart.js"));
    text = text.replace(/\{\{Q:([a-zA-Z]+)\}\}/g, (_, key) => escape(url.searchParams.get(key) || ""));
    res.writeHead(200, {
      "Content-Type": name.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/html; charset=utf-8",
      "Cache-Control": "no-store",
    });
    res.end(text);
  };
  const server = https ? createHttpsServer(certificate(dir), handler) : createHttpServer(handler);
  await new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(0, host, done);
  });
  const origin = `${https ? "https" : "http"}://${host}:${server.address().port}`;
  return {
    origin,
    /** Serves `text` as `name`, as it is (in place of a fixture of that name). */
    put(name, text) {
      built.set(name, text);
    },
    /** The URL of fixture `name` using the loader of widget server `widget`. */
    url(name, widget, query = {}) {
      const params = new URLSearchParams({ server: widget.base, ...query });
      return `${origin}/${name}?${params}`;
    },
    stop() {
      server.closeAllConnections();
      return new Promise((done) => server.close(() => done()));
    },
  };
}

/** Launches Chromium (a fresh temporary profile, removed on close); `executablePath`: a wrapper
 * that starts it (a bench's `taskset`), Debian's Chromium by default. */
export function launchBrowser({ executablePath = CHROMIUM } = {}) {
  return chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS, timeout: 30000 });
}

/** Whether a URL stays on this machine (or is the browser's own). */
export function isLocal(url) {
  if (/^(data|about|blob|chrome-error):/.test(url)) return true;
  try {
    const { protocol, hostname } = new URL(url);
    return (protocol === "http:" || protocol === "https:") && (hostname === "localhost" || /^127\.[0-9.]+$/.test(hostname));
  } catch {
    return false;
  }
}

/**
 * A fresh browser context and page with what the test checks on it: every request's URL
 * (`requests`), page errors from any frame's main script (`errors`), dialogs (`dialogs`: one
 * fails the test) and console messages.
 */
export async function openPage(browser, { viewport = { width: 900, height: 800 }, https = false, locale, timezoneId } = {}) {
  const zone = { ...(locale ? { locale } : {}), ...(timezoneId ? { timezoneId } : {}) };
  const context = await browser.newContext({ viewport, ignoreHTTPSErrors: https, serviceWorkers: "block", ...zone });
  context.setDefaultTimeout(WAIT);
  const page = await context.newPage();
  const seen = { requests: [], errors: [], dialogs: [], console: [] };
  context.on("request", (request) => seen.requests.push(request.url()));
  page.on("pageerror", (error) => seen.errors.push(String(error && error.stack ? error.stack : error)));
  page.on("console", (message) => seen.console.push(message.text()));
  page.on("dialog", (dialog) => {
    seen.dialogs.push(dialog.type() + ": " + dialog.message());
    dialog.dismiss().catch(() => {});
  });
  return {
    context,
    page,
    seen,
    /** Checks what must hold for every page: no request off the machine, no dialog, no error. */
    assertClean(assert) {
      const remote = seen.requests.filter((url) => !isLocal(url));
      assert.deepEqual(remote, [], "every request stays on the loopback interface");
      assert.deepEqual(seen.dialogs, [], "no dialog ever opens");
      assert.deepEqual(seen.errors, [], "no uncaught exception in any frame");
    },
    close: () => context.close(),
  };
}

/**
 * Holds the widget's `POST /v1/widget/check` requests on `p`'s context until the partner page's
 * onEvent has `ready` (bounded by WAIT). The page reports the screen it shows when the loader's
 * hello arrives; a one-screen checkout leaves home as soon as the check answers, so without this
 * whether the partner hears of `home` depends on which came first. Call before rendering.
 */
export function holdChecksUntilReady(p) {
  return p.context.route((url) => url.pathname === "/v1/widget/check", async (route) => {
    await p.page.waitForFunction(() => window.partner && window.partner.events.some((e) => e.type === "ready"), undefined, { timeout: WAIT, polling: 20 }).catch(() => {});
    await route.continue().catch(() => {});
  });
}

/**
 * A fresh page on `site`'s partner page (loading `server`'s loader) with the widget rendered into
 * `#buy` with `options`, its option checks held until `ready` (`holdChecksUntilReady`).
 * `before(p)` runs on the page first (to start recording it); `locale` and `timezoneId` are the
 * browser's (Playwright's context options). Closes the page if a step fails.
 * Returns `{ p, frame, element, handle }`.
 */
export async function openWidget(browser, site, server, options, { viewport = { width: 480, height: 760 }, https = false, before, locale, timezoneId } = {}) {
  const p = await openPage(browser, { viewport, https, locale, timezoneId });
  try {
    if (before) before(p);
    await holdChecksUntilReady(p);
    await p.page.goto(site.url("partner.html", server), { waitUntil: "load" });
    const handle = await render(p.page, { targetContainerId: "buy", ...options });
    assert.equal(handle.ok, true, JSON.stringify(handle));
    const { element, frame } = await widgetFrame(p.page, handle.url);
    return { p, frame, element, handle };
  } catch (error) {
    await p.close();
    throw error;
  }
}

/** The widget iframe's Frame (the child frame whose URL is on `widget`'s origin). */
export async function widgetFrame(page, handleUrl) {
  const element = await page.waitForSelector(`iframe[src="${handleUrl.replace(/"/g, '\\"')}"]`, { state: "attached" });
  const frame = await element.contentFrame();
  if (!frame) throw new Error("the iframe has no frame");
  return { element, frame };
}

/** Waits until the partner page's recorded events satisfy `predicate` (a function's source). */
export async function waitForEvents(page, predicate, arg, timeout = WAIT) {
  await page.waitForFunction(predicate, arg, { timeout, polling: 50 });
  return page.evaluate(() => window.partner.events.slice());
}

/** The partner page's recorded events. */
export function events(page) {
  return page.evaluate(() => window.partner.events.slice());
}

/** Calls `partner.render(options)` in the page: `{ok, url, instanceId}` or the error's fields. */
export function render(page, options) {
  return page.evaluate((options) => window.partner.render(options), options);
}

/** Waits for the frame's `h1` to hold `text` (a string or a RegExp source) and returns it. */
export async function heading(frame, text) {
  const h1 = frame.locator("main h1");
  await h1.filter({ hasText: text }).waitFor({ state: "visible" });
  return h1.textContent();
}

/** The sandbox banner's text: the sign-in code the server answered (no mail in sandbox). */
export const SANDBOX_BANNER = /^Sandbox sign-in code: ([0-9]{6})$/;

/**
 * On the sign-in screen: types `email`, sends it and reads the code from the sandbox banner
 * (`p.sandbox-code`). Returns the code; the code field is then shown, empty.
 */
export async function requestSignInCode(frame, email) {
  await heading(frame, "Sign in");
  await frame.locator("#email").fill(email);
  await frame.getByRole("button", { name: "Send code" }).click();
  const banner = frame.locator("p.sandbox-code");
  await banner.waitFor({ state: "visible" });
  const match = SANDBOX_BANNER.exec(await banner.textContent());
  if (!match) throw new Error(`the sandbox banner says ${JSON.stringify(await banner.textContent())}`);
  await frame.locator("#signin-code").waitFor({ state: "visible" });
  return match[1];
}

/**
 * Signs in on the widget's sign-in screen as `email` with the code from the sandbox banner and
 * waits until the sign-in screen is gone. Returns the code used.
 */
export async function signIn(frame, email) {
  const code = await requestSignInCode(frame, email);
  await frame.locator("#signin-code").fill(code);
  await frame.getByRole("button", { name: "Sign in" }).click();
  await frame.locator("main h1").filter({ hasNotText: /^Sign in$/ }).waitFor({ state: "visible" });
  return code;
}

/** The recovery codes screen's list (SPEC 8.1: 10 codes, six groups of four Crockford base32
 * symbols). */
export const RECOVERY_CODE = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$/;

/**
 * On the "Save your recovery codes" screen (after turning 2FA on, or new codes): reads the 10
 * codes shown, ticks "I saved my recovery codes" and continues; resolves when the screen is gone.
 * Returns the codes.
 */
export async function saveRecoveryCodes(frame) {
  const codes = await recoveryCodesShown(frame);
  await frame.getByLabel("I saved my recovery codes").check();
  await frame.getByRole("button", { name: "Continue", exact: true }).click();
  await frame.locator("main h1").filter({ hasNotText: /^Save your recovery codes$/ }).waitFor({ state: "visible" });
  return codes;
}

/** The codes on the "Save your recovery codes" screen, once it shows (checked: 10, well formed). */
export async function recoveryCodesShown(frame) {
  await heading(frame, "Save your recovery codes");
  const codes = await frame.locator("#recovery-codes li code").allTextContents();
  if (codes.length !== 10 || !codes.every((c) => RECOVERY_CODE.test(c))) throw new Error(`the codes screen shows ${JSON.stringify(codes)}`);
  return codes;
}

/**
 * An authenticator app's code for the base32 `secret` (otplib, an implementation independent of
 * the server's): the 30-second step of now, or `steps` steps later (a later step's code is in the
 * server's window of one step and comes after any step used before it: no replay).
 */
export function totpCode(secret, steps = 0) {
  return authenticator.clone({ epoch: Date.now() + steps * 30000 }).generate(secret);
}

/** A 6-digit code that is none of the codes the server's window (one step each side, with a step
 * to spare) could accept now; `n` picks another one. */
export function wrongTotpCode(secret, n = 0) {
  const near = new Set([-2, -1, 0, 1, 2].map((s) => totpCode(secret, s)));
  for (let i = n; ; i++) {
    const code = String((i * 104729 + 13) % 1000000).padStart(6, "0");
    if (!near.has(code)) return code;
  }
}

/** Writes `name.png` under docs/widget when RAMPART_UPDATE_SCREENSHOTS=1. */
export async function maybeScreenshot(element, name) {
  if (!UPDATE_SCREENSHOTS) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await element.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), animations: "disabled" });
}

/** Removes a directory tree, quietly. */
export function cleanup(dir) {
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** axe-core's browser bundle, injected into a frame (no third-party request). */
export const AXE_SOURCE = readFileSync(join(WIDGET_DIR, "node_modules", "axe-core", "axe.min.js"), "utf8");

/** Runs axe-core in `frame`; the violations of impact serious or critical, summarised. */
export async function seriousViolations(frame) {
  const loaded = await frame.evaluate(() => typeof window.axe === "object");
  if (!loaded) await frame.evaluate(AXE_SOURCE);
  const result = await frame.evaluate(async () => {
    const result = await window.axe.run(document);
    return {
      passes: result.passes.map((p) => p.id),
      violations: result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ") + ": " + n.failureSummary) })),
    };
  });
  // A run that checked nothing would find nothing: the contrast and name rules must have run.
  for (const rule of ["color-contrast", "html-has-lang", "document-title"]) {
    if (!result.passes.includes(rule) && !result.violations.some((v) => v.id === rule)) throw new Error(`axe-core did not check ${rule}`);
  }
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/**
 * The usual setup of a `describe` block: a sandbox server with one partner ("Acme Shop"),
 * `sites` partner sites on 127.0.0.1 and a browser, started in a `before` hook and stopped in an
 * `after` hook registered here. The returned object is filled in when the hook has run.
 */
export function sandboxSuite(prefix, { sites = 1 } = {}) {
  const suite = { dir: undefined, server: undefined, partner: undefined, sites: [], browser: undefined };
  before(async () => {
    suite.dir = tempDir(prefix);
    suite.server = await startServer({ dir: suite.dir, before: (db) => createPartner(db, "Acme Shop") });
    suite.partner = suite.server.made;
    for (let i = 0; i < sites; i++) suite.sites.push(await startPartnerSite());
    suite.browser = await launchBrowser();
  });
  after(async () => {
    if (suite.browser) await suite.browser.close();
    for (const site of suite.sites) await site.stop();
    if (suite.server) await suite.server.stop();
    cleanup(suite.dir);
  });
  return suite;
}
