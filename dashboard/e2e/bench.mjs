// The dashboard's first page, timed (a bench script, never part of `make test`; results in
// docs/BENCHMARKS.md, "Partner dashboard"): the release rampart-server on 127.0.0.1, a signed-in
// member, and Debian's Chromium through playwright-core. Each load is a fresh browser context
// (nothing cached): from navigation to the Overview's heading with its checklist in (no
// "Loading" left). Twice: on an idle server, then on a loaded one (8 loops of requests to the
// server's own routes running the whole time). Median and p95 of N loads (default 10).
//
//   make dashboard-bench            # or: node dashboard/e2e/bench.mjs [N]
import { gzipSync } from "node:zlib";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_DIR, cleanup, cli, createPartner, launchBrowser, startServer, tempDir, totpCode } from "../../widget/e2e/harness.mjs";

const N = Number(process.argv[2] || 10);
const dir = tempDir("rampart-dashboard-bench-");
const server = await startServer({ dir, before: (db) => createPartner(db, "Bench Shop") });
const browser = await launchBrowser();
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

  async function load() {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([{ name, value, url: server.base, httpOnly: true, sameSite: "Strict" }]);
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(`${server.base}/dashboard/#/overview`);
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor({ timeout: 10000 });
    await page.waitForFunction(() => !document.querySelector(".loading") && document.body.textContent.includes("Go-live checklist"), null, { timeout: 10000 });
    const took = performance.now() - started;
    await context.close();
    return took;
  }
  const stats = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return { median: s[Math.floor(s.length / 2)], p95: s[Math.min(s.length - 1, Math.ceil(s.length * 0.95) - 1)] };
  };
  /** The floor: a fresh context loading a bare page of this server (its health answer). */
  async function floor() {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(`${server.base}/healthz`);
    const took = performance.now() - started;
    await context.close();
    return took;
  }
  await load(); // warm the server and the browser once
  await floor();
  const idle = [];
  const bare = [];
  for (let i = 0; i < N; i++) {
    idle.push(await load());
    bare.push(await floor());
  }
  // Load: 8 loops asking the server for the member's session and the widget page, all the time.
  let running = true;
  let served = 0;
  const loops = Array.from({ length: 8 }, async () => {
    while (running) {
      const r = await fetch(server.base + (served % 2 ? "/v1/dashboard/me" : "/healthz"), { headers: { cookie } });
      await r.arrayBuffer();
      served++;
    }
  });
  const loaded = [];
  const from = performance.now();
  for (let i = 0; i < N; i++) loaded.push(await load());
  running = false;
  await Promise.all(loops);
  const rate = served / ((performance.now() - from) / 1000);
  const size = ["index.html", "app.js", "app.css"].reduce((n, f) => n + gzipSync(readFileSync(join(REPO_DIR, "dashboard", "dist", f)), { level: 9 }).length, 0);
  const fmt = ({ median, p95 }) => `median ${median.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`;
  console.log(`dashboard page: ${size} bytes gzip -9 (index.html, app.js, app.css)`);
  console.log(`first page usable, idle server: ${fmt(stats(idle))} (${N} loads); floor (a fresh context loading /healthz): ${fmt(stats(bare))}`);
  console.log(`first page usable, loaded server (${rate.toFixed(0)} other requests/s): ${fmt(stats(loaded))} (${N} loads)`);
} finally {
  await browser.close();
  await server.stop();
  cleanup(dir);
}
