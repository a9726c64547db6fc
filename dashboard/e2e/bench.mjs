// The dashboard's first page, timed (a bench script, never part of `make test`; results in
// docs/BENCHMARKS.md, "Partner dashboard"): the release rampart-server on 127.0.0.1, a signed-in
// member, and Debian's Chromium through playwright-core. Each load is a fresh browser context
// (nothing cached), timed to the Overview's heading with its checklist in (no "Loading" left)
// twice: by the page's own clock (from the navigation's start, as the person sees it) and by
// this script around `goto` (which adds the driver's round trips). Three rounds:
// - idle: the server does nothing else;
// - loaded: 8 loops of requests to the server's own routes the whole time, run by a second Node
//   process (`bench.mjs --load`), the browser, the server and the load sharing both cores;
// - loaded, split: the same load, the server and its load on one core (`taskset`), the browser
//   and this script on the other, as when a person's browser runs on their own machine.
// Median and p95 of N loads (default 10) each.
//
//   make dashboard-bench            # or: node dashboard/e2e/bench.mjs [N]
import { execFileSync, spawn } from "node:child_process";
import { gzipSync } from "node:zlib";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

if (process.argv[2] === "--load") {
  // The load: 8 loops asking the server for a member's session and its health, until stopped;
  // prints how many requests were answered.
  const [base, cookie] = process.argv.slice(3);
  let running = true;
  let served = 0;
  process.on("SIGTERM", () => (running = false));
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (running) {
        const r = await fetch(base + (served % 2 ? "/v1/dashboard/me" : "/healthz"), { headers: { cookie } });
        await r.arrayBuffer();
        served++;
      }
    }),
  );
  console.log(String(served));
  process.exit(0);
}

const { REPO_DIR, CHROMIUM, cleanup, cli, createPartner, launchBrowser, startServer, tempDir, totpCode } = await import("../../widget/e2e/harness.mjs");
const N = Number(process.argv[2] || 10);
const dir = tempDir("rampart-dashboard-bench-");
const server = await startServer({ dir, before: (db) => createPartner(db, "Bench Shop") });
const browser = await launchBrowser();
// The split round's browser: Chromium started on core 0 (its processes inherit the mask).
const pinned = join(dir, "chromium-core0");
writeFileSync(pinned, `#!/bin/sh\nexec taskset -c 0 ${CHROMIUM} "$@"\n`, { mode: 0o755 });
/** Sets the CPU mask of a process and all its threads. */
const pin = (pid, cores) => execFileSync("taskset", ["-a", "-p", "-c", cores, String(pid)], { stdio: "ignore" });
try {
  const made = cli(["--db", server.db, "partner", "invite", "--partner", server.made.superuserId, "--email", "bench@example.com", "--role", "owner"]);
  const token = made.link.split("#invite=")[1];
  const post = (path, body, cookie) =>
    fetch(server.base + path, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.base, ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    });
  const accepted = await post("/v1/dashboard/invitation/accept", { token, password: "violet tractor lamp 42" });
  const cookie = accepted.headers.get("set-cookie").split(";")[0];
  const { twoFactor } = await accepted.json();
  const enabled = await post("/v1/dashboard/setup/enable", { code: totpCode(twoFactor.manualKey) }, cookie);
  if (enabled.status !== 200) throw new Error(`setup: ${enabled.status}`);
  const [name, value] = cookie.split("=");

  /** Set in the page before its own scripts: the page's clock when the Overview is usable. */
  const WATCH = () => {
    const usable = () => document.querySelector("h1") && document.querySelector("h1").textContent === "Overview" && !document.querySelector(".loading") && document.body.textContent.includes("Go-live checklist");
    new MutationObserver((_, observer) => {
      if (usable()) {
        window.__usable = performance.now();
        console.debug("rampart-usable");
        observer.disconnect();
      }
    }).observe(document, { childList: true, subtree: true, characterData: true });
  };

  /** One load in a fresh context: [the page's own time, the driver's]. */
  async function load(browser) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([{ name, value, url: server.base, httpOnly: true, sameSite: "Strict" }]);
    await context.addInitScript(WATCH);
    const page = await context.newPage();
    const started = performance.now();
    // The page says when it is usable on its console: waiting for that adds nothing to the page
    // (polling it with waitForFunction or a role query would inject Playwright's script into the
    // page, about 15 ms of its main thread while it loads).
    const usable = page.waitForEvent("console", { predicate: (m) => m.text() === "rampart-usable", timeout: 10000 });
    await page.goto(`${server.base}/dashboard/#/overview`, { waitUntil: "commit" });
    await usable;
    const took = performance.now() - started;
    const [inPage, marks] = await page.evaluate(() => {
      const nav = performance.getEntriesByType("navigation")[0];
      const marks = { html: nav.responseEnd, domInteractive: nav.domInteractive };
      for (const r of performance.getEntriesByType("resource")) {
        const name = new URL(r.name).pathname.split("/").pop();
        marks[name + " start"] = r.startTime;
        marks[name + " end"] = r.responseEnd;
      }
      return [window.__usable, marks];
    });
    await context.close();
    return [inPage, took, marks];
  }
  const stats = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return { median: s[Math.floor(s.length / 2)], p95: s[Math.min(s.length - 1, Math.ceil(s.length * 0.95) - 1)] };
  };
  /** The floor: a fresh context loading a bare page of this server (its health answer). */
  async function floor(browser) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(`${server.base}/healthz`);
    const took = performance.now() - started;
    await context.close();
    return took;
  }
  async function round(browser) {
    const page = [];
    const driver = [];
    const bare = [];
    const marks = {};
    for (let i = 0; i < N; i++) {
      const [p, d, m] = await load(browser);
      page.push(p);
      driver.push(d);
      for (const [k, v] of Object.entries(m)) (marks[k] ||= []).push(v);
      bare.push(await floor(browser));
    }
    const steps = Object.entries(marks)
      .map(([k, v]) => [k, stats(v).median])
      .sort((a, b) => a[1] - b[1])
      .map(([k, v]) => `${k} ${v.toFixed(0)}`)
      .join(", ");
    return { page: stats(page), driver: stats(driver), floor: stats(bare), steps };
  }
  /** A round while the load runs (on `cores` when given): the round and the load's rate. */
  async function underLoad(browser, cores) {
    const command = [process.execPath, fileURLToPath(import.meta.url), "--load", server.base, cookie];
    const loader = cores ? spawn("taskset", ["-c", cores, ...command], { stdio: ["ignore", "pipe", "inherit"] }) : spawn(command[0], command.slice(1), { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    loader.stdout.on("data", (d) => (out += d));
    const from = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the load running before the first load
    const result = await round(browser);
    const seconds = (performance.now() - from) / 1000;
    loader.kill("SIGTERM");
    await new Promise((resolve) => loader.on("exit", resolve));
    return { ...result, rate: Number(out.trim()) / seconds };
  }
  const warm = async (browser) => {
    await load(browser);
    await floor(browser);
  };
  await warm(browser);
  const idle = await round(browser);
  const loaded = await underLoad(browser, null);
  // Split: the server and its load on core 1; this script and a browser started on core 0.
  pin(server.pid, "1");
  pin(process.pid, "0");
  const own = await launchBrowser({ executablePath: pinned });
  let split;
  try {
    await warm(own);
    split = await underLoad(own, "1");
  } finally {
    await own.close();
  }
  const size = gzipSync(readFileSync(join(REPO_DIR, "dashboard", "dist", "index.html")), { level: 9 }).length;
  const fmt = ({ median, p95 }) => `median ${median.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`;
  const report = (title, r) => {
    console.log(`first page usable, ${title}: the page's clock ${fmt(r.page)}; the driver's ${fmt(r.driver)}; floor (a fresh context loading /healthz, the driver's) ${fmt(r.floor)}`);
    console.log(`  where the time goes (the page's clock, ms, medians): ${r.steps}`);
  };
  console.log(`dashboard page: ${size} bytes gzip -9 (index.html, holding its script and style)`);
  report(`idle server (${N} loads)`, idle);
  report(`loaded server, all on both cores (${loaded.rate.toFixed(0)} other requests/s, ${N} loads)`, loaded);
  report(`loaded server, split: server and load on core 1, browser on core 0 (${split.rate.toFixed(0)} other requests/s, ${N} loads)`, split);
} finally {
  await browser.close();
  await server.stop();
  cleanup(dir);
}
