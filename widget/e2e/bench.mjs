// `make widget-bench`: the time from `Rampart.render` to the widget's `ready` event over cold
// loads in headless Chromium (a fresh browser context each time, so nothing is cached), against
// the floor of a bare cross-origin iframe of a static page; then a full sandbox purchase (home,
// coin, amount, address, sign-in with the sandbox banner's code, review, Buy, confirmation),
// from opening the partner page to the "Purchase complete" heading, split into the server's time
// (the page's API requests, from Playwright's request timing) and the rest (the browser and the
// page). A benchmark, not a test: it prints medians and never fails on a number. Loopback only.
//
//   node e2e/bench.mjs [loads] [purchases]      (the server binary as for the e2e tests)
import { cpus } from "node:os";
import {
  BTC_ADDRESS,
  cleanup,
  createPartner,
  launchBrowser,
  openPage,
  registerOrigins,
  startPartnerSite,
  startServer,
  tempDir,
} from "./harness.mjs";

const LOADS = Number(process.argv[2] || 20);
const PURCHASES = Number(process.argv[3] || 10);

/**
 * The person, inside the widget frame: clicks and types as fast as the page lets it (no think
 * time, no driver round trip per step), reading the sign-in code from the sandbox banner.
 * Resolves when the confirmation's heading is shown.
 */
async function buyInFrame({ email, address }) {
  const tick = () => new Promise((r) => setTimeout(r, 1));
  const until = async (find, what) => {
    const start = performance.now();
    for (;;) {
      const found = find();
      if (found) return found;
      if (performance.now() - start > 15000) throw new Error("no " + what + " within 15 s: " + document.querySelector("main").textContent);
      await tick();
    }
  };
  const screen = (title) => until(() => { const h = document.querySelector("main h1"); return h && h.textContent === title; }, title);
  const button = (text) => until(() => [...document.querySelectorAll("main button")].find((b) => b.textContent === text && b.getAttribute("aria-disabled") !== "true"), text);
  const type = async (id, value) => {
    const input = await until(() => document.getElementById(id), "#" + id);
    input.value = value;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  };
  (await button("Start")).click();
  await screen("Choose a coin");
  document.getElementById("coin-btc").click();
  (await button("Continue")).click();
  await screen("How much do you want to spend?");
  await type("amount", "25");
  (await button("Continue")).click();
  await screen("Where should we send your Bitcoin?");
  await type("address", address);
  (await button("Continue")).click();
  await screen("Sign in");
  await type("email", email);
  (await button("Send code")).click();
  const code = await until(() => { const c = document.querySelector("p.sandbox-code code"); return c && c.textContent; }, "sandbox code");
  await type("signin-code", code);
  (await button("Sign in")).click();
  await screen("Your purchase");
  (await button("Buy now")).click();
  await screen("Purchase complete");
}

function summary(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return { median: at(0.5), p95: at(0.95), min: sorted[0], max: sorted[sorted.length - 1] };
}

const dir = tempDir("rampart-bench-");
const server = await startServer({ dir });
const partnerSite = await startPartnerSite({ dir, host: "127.0.0.2" });
const staticSite = await startPartnerSite({ dir, host: "127.0.0.3" });
const browser = await launchBrowser();
try {
  const partner = createPartner(server.db, "Bench shop");
  await registerOrigins(server, partner, [partnerSite.origin]);
  const widget = [];
  const floor = [];
  for (let i = 0; i < LOADS; i++) {
    const opened = await openPage(browser);
    await opened.page.goto(partnerSite.url("partner.html", server));
    await opened.page.waitForFunction(() => typeof window.Rampart === "object");
    widget.push(
      await opened.page.evaluate(async (publicKey) => {
        const start = performance.now();
        window.partner.render({ targetContainerId: "buy", publicKey, clientName: "Bench shop" });
        while (!window.partner.events.some((e) => e.type === "ready")) {
          if (performance.now() - start > 15000) throw new Error("no ready within 15 s");
          await new Promise((r) => setTimeout(r, 2));
        }
        return performance.now() - start;
      }, partner.publicKey),
    );
    await opened.close();

    const bare = await openPage(browser);
    await bare.page.goto(partnerSite.url("partner.html", server));
    floor.push(
      await bare.page.evaluate(
        (src) =>
          new Promise((resolve) => {
            const start = performance.now();
            const frame = document.createElement("iframe");
            frame.width = "420";
            frame.height = "550";
            frame.addEventListener("load", () => resolve(performance.now() - start));
            frame.src = src;
            document.getElementById("buy").appendChild(frame);
          }),
        `${staticSite.origin}/static.html`,
      ),
    );
    await bare.close();
  }
  const round = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Math.round(v * 10) / 10]));
  const w = round(summary(widget));
  const f = round(summary(floor));
  console.log(`widget render -> ready over ${LOADS} cold loads (ms): ${JSON.stringify(w)}`);
  console.log(`bare iframe of a static page, load event (ms):  ${JSON.stringify(f)}`);
  console.log(`ratio of medians: ${(w.median / f.median).toFixed(2)}`);

  // A full sandbox purchase, PURCHASES times, each in a fresh context with its own email.
  const totals = [];
  const servers = [];
  const pages = [];
  let apiCount = 0;
  for (let i = 0; i < PURCHASES; i++) {
    const opened = await openPage(browser);
    const api = [];
    opened.context.on("requestfinished", (request) => {
      if (!request.url().startsWith(server.base + "/v1/")) return;
      // Milliseconds from the request's start to its response's last byte (the loopback
      // connection, the server's work and the transfer).
      const t = request.timing();
      api.push(t.responseEnd >= 0 ? t.responseEnd : 0);
    });
    const start = performance.now();
    await opened.page.goto(partnerSite.url("partner.html", server));
    await opened.page.evaluate((publicKey) => window.partner.render({ targetContainerId: "buy", publicKey, clientName: "Bench shop" }), partner.publicKey);
    const frame = await (await opened.page.waitForSelector("#buy iframe", { state: "attached" })).contentFrame();
    await frame.waitForSelector("main h1");
    await frame.evaluate(buyInFrame, { email: `bench-${i}@example.com`, address: BTC_ADDRESS });
    const total = performance.now() - start;
    await opened.close();
    const serverTime = api.reduce((a, b) => a + b, 0);
    totals.push(total);
    servers.push(serverTime);
    pages.push(total - serverTime);
    apiCount = api.length;
  }
  const med = (xs) => Math.round(summary(xs).median * 10) / 10;
  const machine = `${cpus().length} vCPU ${cpus()[0].model.trim()}, Chromium ${browser.version()}`;
  console.log(`full sandbox purchase, partner page opened -> "Purchase complete", median of ${PURCHASES} (ms): ` +
    JSON.stringify({ total: med(totals), server: med(servers), page: med(pages), apiRequests: apiCount, min: Math.round(Math.min(...totals)), max: Math.round(Math.max(...totals)) }));
  console.log("| machine | command | runs | total median | server (API requests) median | page median |");
  console.log("|---|---|---:|---:|---:|---:|");
  console.log(`| ${machine} | \`make widget-bench\` (node e2e/bench.mjs ${LOADS} ${PURCHASES}) | ${PURCHASES} | ${med(totals)} ms | ${med(servers)} ms (${apiCount}) | ${med(pages)} ms |`);
} finally {
  await browser.close();
  await partnerSite.stop();
  await staticSite.stop();
  await server.stop();
  cleanup(dir);
}
