// `make widget-bench`: the time from `Rampart.render` to the widget's `ready` event over cold
// loads in headless Chromium (a fresh browser context each time, so nothing is cached), against
// the floor of a bare cross-origin iframe of a static page. A benchmark, not a test: it prints
// median and p95 and never fails on a number. Loopback only.
//
//   node e2e/bench.mjs [loads]      (the server binary as for the e2e tests)
import {
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
} finally {
  await browser.close();
  await partnerSite.stop();
  await staticSite.stop();
  await server.stop();
  cleanup(dir);
}
