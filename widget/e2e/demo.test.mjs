// The demo partner page `make run` prints (`GET /demo`): on a server with no partner, the first
// start creates the sandbox demo partner; its page embeds the widget with the snippet it shows,
// a person buys in it, and the page's live log shows the events with the order id.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import {
  BTC_ADDRESS,
  TEST_TIMEOUT,
  cleanup,
  heading,
  launchBrowser,
  maybeScreenshot,
  openPage,
  signIn,
  startServer,
  tempDir,
} from "./harness.mjs";

const suite = {};
before(async () => {
  suite.dir = tempDir("rampart-demo-");
  suite.server = await startServer({ dir: suite.dir });
  suite.browser = await launchBrowser();
});
after(async () => {
  if (suite.browser) await suite.browser.close();
  if (suite.server) await suite.server.stop();
  cleanup(suite.dir);
});

test("the demo page embeds the widget, shows its snippet, and logs a purchase's events", { timeout: TEST_TIMEOUT }, async () => {
  const opened = await openPage(suite.browser, { viewport: { width: 1100, height: 1000 } });
  const { page } = opened;
  const response = await page.goto(`${suite.server.base}/demo`);
  assert.equal(response.status(), 200);
  const snippet = await page.locator("pre code").textContent();
  assert.match(snippet, /^<div id="rampart-widget"><\/div>\n<script src="http:\/\/127\.0\.0\.1:\d+\/widget\/v1\/rampart\.js"><\/script>\n<script>Rampart\.render\(\{"clientName":"Demo partner","environment":"sandbox","publicKey":"pk_sandbox_[A-Za-z0-9]+","targetContainerId":"rampart-widget"\}\);<\/script>\n/);

  const element = await page.waitForSelector("#rampart-widget iframe");
  const frame = await element.contentFrame();
  await heading(frame, "Demo partner");
  await frame.getByRole("button", { name: "Start" }).click();
  await heading(frame, "Choose a coin");
  await frame.getByRole("button", { name: "Continue" }).click();
  await heading(frame, "How much do you want to spend?");
  await frame.locator("#amount").fill("25");
  await frame.getByRole("button", { name: "Continue" }).click();
  await heading(frame, "Where should we send your Bitcoin?");
  await frame.locator("#address").fill(BTC_ADDRESS);
  await frame.getByRole("button", { name: "Continue" }).click();
  await signIn(frame, "demo@example.com");
  await heading(frame, "Your purchase");
  await frame.getByRole("button", { name: "Buy now" }).click();
  await heading(frame, "Purchase complete");
  const orderId = (await frame.locator("#order-id").textContent()).trim();
  assert.match(orderId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

  const log = page.locator("#events li");
  await log.filter({ hasText: "order.completed" }).waitFor();
  const lines = await log.allTextContents();
  assert.match(lines[0], /^ready \{"url":"http:\/\/127\.0\.0\.1:\d+\/widget\/\?publicKey=pk_sandbox_/);
  const orders = lines.filter((line) => line.startsWith("order."));
  assert.deepEqual(orders, [
    `order.created {"orderId":"${orderId}"}`,
    `order.completed {"orderId":"${orderId}","status":"completed"}`,
  ]);
  for (const line of lines) assert.doesNotMatch(line, /ws_|demo@example\.com|sandbox-code/, "no token or email in an event");
  await maybeScreenshot(page, "demo");
  opened.assertClean(assert);
  await opened.close();
});
