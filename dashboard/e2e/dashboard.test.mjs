// The partner dashboard in Debian's Chromium against the real rampart-server (SPEC 11), with the
// widget's end-to-end harness (widget/e2e/harness.mjs: the server binary on 127.0.0.1, a
// loopback-only browser, otplib for the authenticator, axe-core):
// - an invitation to the Overview: password rules, the authenticator set up with codes computed
//   from the manual key, the recovery codes shown once, nothing secret in storage or the URL;
// - sign-out, a wrong password and wrong codes up to the throttle's 429, sign-in with a
//   recovery code;
// - opening on any page: /me and the page's data asked for side by side, once each;
// - every page in every role, axe-core clean in both themes and at 320 px, and the changes a
//   viewer or a developer may not make refused by the server when called directly;
// - bad input (a filter, an invitation, the origins, a webhook URL) answered next to its field
//   in the server's words;
// - a webhook endpoint added (its secret once), tested, its secret replaced, deleted;
// - an owner's changes: widget settings, an invitation, the contact lists, order filters;
// - CSRF: a change without the token, with another session's, or from another origin;
// - the session ending after 30 idle minutes (the server's test clock);
// - the key roll by keyboard alone.
// `RAMPART_UPDATE_SCREENSHOTS=1` also writes docs/dashboard/<page>-<theme>.png.
import assert from "node:assert/strict";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  REPO_DIR,
  TEST_TIMEOUT,
  UPDATE_SCREENSHOTS,
  WAIT,
  cleanup,
  cli,
  createPartner,
  launchBrowser,
  seriousViolations,
  startPartnerSite,
  startServer,
  tempDir,
  totpCode,
  wrongTotpCode,
} from "../../widget/e2e/harness.mjs";

const PASSWORD = "violet tractor lamp 42";
const SHOTS = join(REPO_DIR, "docs", "dashboard");
const PAGES = ["overview", "keys", "widget", "orders", "contacts", "webhooks", "audit", "team"];
const HEADINGS = {
  overview: "Overview",
  keys: "API keys",
  widget: "Widget",
  orders: "Orders",
  contacts: "Contacts",
  webhooks: "Webhooks",
  audit: "Audit",
  team: "Team",
};

/** A JSON request as the page makes it (same origin unless `origin` says otherwise). */
async function call(server, path, { method = "POST", body, cookie, csrf, origin = server.base } = {}) {
  const headers = { "content-type": "application/json" };
  if (origin) headers.origin = origin;
  if (cookie) headers.cookie = cookie;
  if (csrf) headers["x-csrf-token"] = csrf;
  const r = await fetch(server.base + path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const set = r.headers.get("set-cookie");
  const text = await r.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, body: json, cookie: set ? set.split(";")[0] : cookie };
}

/** `partner invite` on the running server's database: the invitation token. */
function invite(server, partnerId, email, role) {
  const made = cli(["--db", server.db, "partner", "invite", "--partner", partnerId, "--email", email, "--role", role]);
  return made.link.split("#invite=")[1];
}

/** A member who accepted and set up an authenticator over HTTP: cookie, CSRF token, secret. */
async function join_(server, partnerId, email, role) {
  const token = invite(server, partnerId, email, role);
  const accepted = await call(server, "/v1/dashboard/invitation/accept", { body: { token, password: PASSWORD } });
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  const secret = accepted.body.twoFactor.manualKey;
  const enabled = await call(server, "/v1/dashboard/setup/enable", { body: { code: totpCode(secret) }, cookie: accepted.cookie });
  assert.equal(enabled.status, 200, JSON.stringify(enabled.body));
  return { cookie: accepted.cookie, csrf: enabled.body.csrfToken, secret, email };
}

/** A browser context signed in as `member` (its cookie, as the server set it). */
async function signedInPage(browser, server, member, { colorScheme = "light", width = 1280 } = {}) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme });
  const [name, value] = member.cookie.split("=");
  await context.addCookies([{ name, value, url: server.base, httpOnly: true, sameSite: "Strict" }]);
  const page = await context.newPage();
  page.on("pageerror", (e) => {
    throw e;
  });
  return { context, page };
}

async function heading(page, text) {
  await page.getByRole("heading", { level: 1, name: text }).waitFor({ timeout: WAIT });
}

/** Waits until the page's data is in (no "Loading" left). */
async function settled(page) {
  await page.waitForFunction(() => !document.querySelector(".loading"), null, { timeout: WAIT });
}

async function shot(page, name) {
  if (!UPDATE_SCREENSHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true, animations: "disabled" });
}

/** Nothing secret where the page could leak it: storage, the address bar, `document.cookie`. */
async function nothingStored(page) {
  const seen = await page.evaluate(() => ({
    local: Object.keys(localStorage).length,
    session: Object.keys(sessionStorage).length,
    cookie: document.cookie,
    url: location.href,
  }));
  assert.deepEqual([seen.local, seen.session, seen.cookie], [0, 0, ""], JSON.stringify(seen));
  assert.ok(!/inv_|ds_|sk_|whsec_/.test(seen.url), seen.url);
}

describe("partner dashboard", () => {
  let dir, server, partner, browser, clockFile, ticking;
  // The server's clock (its test hook) runs with real time, `ahead` seconds ahead of it: the
  // authenticator codes computed here stay valid however long the tests take. Each tick writes
  // a new file and renames it over the old one, so the server never reads half of one.
  let ahead = 0;
  const tick = () => {
    writeFileSync(clockFile + ".new", `${(Date.now() / 1000 + ahead).toFixed(3)}\n`);
    renameSync(clockFile + ".new", clockFile);
  };
  const setAhead = (seconds) => {
    ahead = seconds;
    tick();
  };
  before(async () => {
    dir = tempDir("rampart-dashboard-e2e-");
    clockFile = join(dir, "clock");
    tick();
    ticking = setInterval(tick, 200);
    server = await startServer({ dir, before: (db) => createPartner(db, "Acme Shop"), args: ["--test-clock-file", clockFile] });
    partner = server.made;
    browser = await launchBrowser();
  });
  after(async () => {
    clearInterval(ticking);
    if (browser) await browser.close();
    if (server) await server.stop();
    cleanup(dir);
  });

  test("an invitation leads to the Overview", { timeout: TEST_TIMEOUT }, async () => {
    const token = invite(server, partner.superuserId, "dana@example.com", "owner");
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.base}/dashboard/#invite=${token}`);
    await heading(page, "Accept your invitation");
    assert.ok(!page.url().includes("inv_"), "the token leaves the address bar at once");
    await shot(page, "invitation-light");
    // The rules, shown next to the field.
    await page.getByLabel("Password", { exact: true }).fill("short");
    await page.getByLabel("Password again").fill("short");
    await page.getByRole("button", { name: "Set password" }).click();
    await page.getByText("password must be at least 12 characters").waitFor({ timeout: WAIT });
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByLabel("Password again").fill(PASSWORD);
    await page.getByRole("button", { name: "Set password" }).click();
    await heading(page, "Set up your authenticator");
    const secret = (await page.locator("#manual-key").textContent()).replace(/\s+/g, "");
    await shot(page, "setup-light");
    await page.getByLabel("Code from the app").fill(wrongTotpCode(secret));
    await page.getByRole("button", { name: "Turn on" }).click();
    await page.getByText(/code/i).filter({ hasText: /wrong/ }).first().waitFor({ timeout: WAIT });
    await page.getByLabel("Code from the app").fill(totpCode(secret));
    await page.getByRole("button", { name: "Turn on" }).click();
    const codes = page.locator("#recovery-codes li");
    await codes.first().waitFor({ timeout: WAIT });
    assert.equal(await codes.count(), 10);
    const recovery = (await codes.first().textContent()).trim();
    await page.getByRole("button", { name: "I have saved these codes" }).click();
    await heading(page, "Overview");
    await nothingStored(page);
    // The codes were shown once: nothing brings them back.
    assert.equal(await page.locator("#recovery-codes").count(), 0);
    // Sign out, then sign in with a recovery code.
    await page.getByRole("button", { name: "Sign out" }).click();
    await heading(page, "Sign in");
    await page.getByLabel("Email").fill("dana@example.com");
    await page.getByLabel("Password", { exact: true }).fill("not the password!");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByText("Email or password is wrong.").waitFor({ timeout: WAIT });
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Continue" }).click();
    // Wrong codes: five are answered 401 next to the field, then the SPEC 2 throttle (429) is
    // shown with its wait; the recovery code has its own counter and still signs in.
    const codeAnswer = () => page.waitForResponse((r) => r.url().endsWith("/v1/dashboard/sign-in/code"));
    let wait = null;
    for (let i = 1; i <= 6; i++) {
      await page.getByRole("textbox", { name: "Authenticator code" }).fill(wrongTotpCode(secret));
      const [answer] = await Promise.all([codeAnswer(), page.getByRole("button", { name: "Sign in" }).click()]);
      assert.equal(answer.status(), i <= 5 ? 401 : 429, `wrong code ${i}`);
      wait = answer.headers()["retry-after"];
    }
    assert.ok(["29", "30"].includes(wait), `Retry-After ${wait}`);
    await page.getByText("This code is wrong or expired.").waitFor({ state: "detached", timeout: WAIT });
    await page.getByText(`Too many attempts. Try again in ${wait} seconds.`).waitFor({ timeout: WAIT });
    await page.getByRole("button", { name: "Use a recovery code instead" }).click();
    await page.getByRole("textbox", { name: "Recovery code" }).fill(recovery);
    await page.getByRole("button", { name: "Sign in" }).click();
    await heading(page, "Overview");
    await context.close();
  });

  test("every page in every role, axe-core clean in both themes and at 320 px", { timeout: 120000 }, async () => {
    const members = {
      owner: await join_(server, partner.superuserId, "olive@example.com", "owner"),
      developer: await join_(server, partner.superuserId, "dev@example.com", "developer"),
      viewer: await join_(server, partner.superuserId, "vic@example.com", "viewer"),
    };
    for (const [role, member] of Object.entries(members)) {
      for (const colorScheme of ["light", "dark"]) {
        const { context, page } = await signedInPage(browser, server, member, { colorScheme });
        for (const name of PAGES) {
          if (name === "team" && role !== "owner") continue;
          await page.goto(`${server.base}/dashboard/#/${name}`);
          await heading(page, HEADINGS[name]);
          await settled(page);
          // The page's data is in: no failure shown in its place.
          const problems = (await page.locator(".problem").allTextContents()).filter((t) => t.trim());
          assert.deepEqual(problems, [], `${role} ${name}`);
          const serious = await seriousViolations(page.mainFrame());
          assert.deepEqual(serious, [], `${role} ${name} ${colorScheme}`);
          if (role === "owner") await shot(page, `${name}-${colorScheme}`);
        }
        // What the role may not change is not offered.
        await page.goto(`${server.base}/dashboard/#/keys`);
        await heading(page, "API keys");
        await settled(page);
        assert.equal(await page.getByRole("button", { name: "Roll secret key" }).count(), role === "viewer" ? 0 : 1, role);
        await nothingStored(page);
        await context.close();
      }
    }
    // At 320 px nothing scrolls sideways (tables scroll inside their box).
    const { context, page } = await signedInPage(browser, server, members.owner, { width: 320 });
    for (const name of PAGES) {
      await page.goto(`${server.base}/dashboard/#/${name}`);
      await heading(page, HEADINGS[name]);
      await settled(page);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.equal(overflow, 0, `${name} at 320 px`);
      assert.deepEqual(await seriousViolations(page.mainFrame()), [], `${name} at 320 px`);
      if (name === "overview" || name === "keys") await shot(page, `${name}-320`);
    }
    await context.close();
    // The server refuses what the page does not offer.
    const { viewer, developer } = members;
    const refused = [
      [viewer, "/v1/dashboard/keys/roll", { expiresIn: "now" }],
      [viewer, "/v1/dashboard/webhooks", { url: "https://93.184.216.34/h", events: ["order.created"] }],
      [developer, "/v1/dashboard/team/invitations", { email: "x@example.com", role: "owner" }],
    ];
    for (const [member, path, body] of refused) {
      const r = await call(server, path, { body, cookie: member.cookie, csrf: member.csrf });
      assert.deepEqual([r.status, r.body.message], [403, "Your role cannot do this."], `${member.email} ${path}`);
    }
    const put = await call(server, "/v1/dashboard/widget", { method: "PUT", body: { widgetText: "x" }, cookie: viewer.cookie, csrf: viewer.csrf });
    assert.equal(put.status, 403);
  });

  test("opening the dashboard on a page asks for /me and the page's data once each, side by side", { timeout: TEST_TIMEOUT }, async () => {
    const member = await join_(server, partner.superuserId, "pat@example.com", "owner");
    const first = {
      overview: "/overview",
      keys: "/keys",
      widget: "/widget",
      orders: "/orders",
      contacts: "/contacts",
      webhooks: "/webhooks",
      audit: "/audit",
      team: "/team",
    };
    const { context, page } = await signedInPage(browser, server, member);
    for (const name of PAGES) {
      const events = [];
      const path = (r) => new URL(r.url()).pathname.replace("/v1/dashboard", "");
      const onRequest = (r) => r.url().includes("/v1/dashboard/") && events.push(["request", path(r)]);
      const onResponse = (r) => r.url().includes("/v1/dashboard/") && events.push(["response", path(r)]);
      page.on("request", onRequest);
      page.on("response", onResponse);
      await page.goto("about:blank");
      await page.goto(`${server.base}/dashboard/#/${name}`);
      await heading(page, HEADINGS[name]);
      await settled(page);
      page.off("request", onRequest);
      page.off("response", onResponse);
      const requests = events.filter(([kind]) => kind === "request").map(([, p]) => p);
      assert.deepEqual(requests.slice(0, 2).sort(), ["/me", first[name]].sort(), name);
      assert.equal(requests.filter((p) => p === first[name]).length, 1, `${name}: asked once`);
      const sent = events.findIndex(([kind, p]) => kind === "request" && p === first[name]);
      const me = events.findIndex(([kind, p]) => kind === "response" && p === "/me");
      assert.ok(sent < me, `${name}: its data is asked for before /me answers`);
    }
    await context.close();
  });

  test("bad input is answered next to its field, in the server's words", { timeout: 60000 }, async () => {
    const member = await join_(server, partner.superuserId, "bea@example.com", "owner");
    const { context, page } = await signedInPage(browser, server, member);
    const cases = [
      // [page, field id, value, submit button, the same request made directly]
      ["orders", "contactId", "not-a-contact", "Apply filters", () => call(server, "/v1/dashboard/orders?contactId=not-a-contact", { method: "GET", cookie: member.cookie })],
      ["team", "invite-email", "not an email", "Create invitation", () => call(server, "/v1/dashboard/team/invitations", { body: { email: "not an email", role: "developer" }, cookie: member.cookie, csrf: member.csrf })],
      ["widget", "widgetOrigins", "ftp://shop.example", "Save", () => call(server, "/v1/dashboard/widget", { method: "PUT", body: { widgetOrigins: ["ftp://shop.example"] }, cookie: member.cookie, csrf: member.csrf })],
      ["webhooks", "webhook-url", "https://127.0.0.1/hooks", "Add endpoint", () => call(server, "/v1/dashboard/webhooks", { body: { url: "https://127.0.0.1/hooks", events: ["order.created"] }, cookie: member.cookie, csrf: member.csrf })],
    ];
    for (const [name, id, value, submit, direct] of cases) {
      const answer = await direct();
      assert.equal(answer.status, 400, `${name}: ${JSON.stringify(answer.body)}`);
      assert.ok(answer.body.message, name);
      await page.goto(`${server.base}/dashboard/#/${name}`);
      await heading(page, HEADINGS[name]);
      await settled(page);
      await page
        .locator(`#${id}`)
        .fill(value, { timeout: WAIT })
        .catch(async () => assert.fail(`${name}: no #${id}; the page says: ${await page.locator("main").textContent()} ${JSON.stringify(await call(server, "/v1/dashboard/" + name, { method: "GET", cookie: member.cookie }))}`));
      await page.getByRole("button", { name: submit, exact: true }).click();
      await page
        .waitForFunction((id) => document.getElementById(id + "-error").textContent !== "", id, { timeout: WAIT })
        .catch(async () => assert.fail(`${name}: no error next to #${id}; the page says: ${await page.locator("main").textContent()}`));
      assert.equal(await page.locator(`#${id}-error`).textContent(), answer.body.message, name);
      assert.equal(await page.locator(`#${id}`).getAttribute("aria-invalid"), "true", name);
    }
    await context.close();
  });

  test("webhooks: an endpoint added with its secret shown once, a test sent, the secret replaced, the endpoint deleted", { timeout: TEST_TIMEOUT }, async () => {
    const member = await join_(server, partner.superuserId, "wes@example.com", "developer");
    const { context, page } = await signedInPage(browser, server, member);
    const url = "https://93.184.216.34/hooks";
    await page.goto(`${server.base}/dashboard/#/webhooks`);
    await heading(page, "Webhooks");
    await settled(page);
    await page.getByLabel("Endpoint URL").fill(url);
    await page.getByRole("checkbox", { name: "order.failed" }).uncheck();
    await page.getByRole("button", { name: "Add endpoint", exact: true }).click();
    const first = page.locator("#new-webhook-secret");
    await first.waitFor({ timeout: WAIT });
    const secret = await first.inputValue();
    assert.match(secret, /^whsec_[A-Za-z0-9+/=]{20,}$/);
    const card = page.getByRole("listitem").filter({ hasText: url });
    await card.getByText("Enabled", { exact: true }).waitFor({ timeout: WAIT });
    assert.ok(!(await card.textContent()).includes("order.failed"), "the events chosen");
    const listed = await call(server, "/v1/dashboard/webhooks", { method: "GET", cookie: member.cookie });
    assert.deepEqual(listed.body.endpoints.map((e) => e.url), [url]);
    assert.ok(!JSON.stringify(listed.body).includes("whsec_"), "the secret is shown once, never listed");
    await card.getByRole("button", { name: `Send test to ${url}` }).click();
    await card.getByText("Test event queued.").waitFor({ timeout: WAIT });
    await card.getByRole("button", { name: `New signing secret for ${url}` }).click();
    await card.getByRole("button", { name: "Replace secret" }).click();
    const replaced = card.locator("input[readonly]").first();
    await page.waitForFunction((id) => (document.querySelector(`#${id} input[readonly]`)?.value || "").startsWith("whsec_"), await card.getAttribute("id"), { timeout: WAIT });
    assert.notEqual(await replaced.inputValue(), secret, "a new secret");
    await nothingStored(page);
    await card.getByRole("button", { name: `Delete ${url}` }).click();
    await card.getByRole("button", { name: "Delete endpoint" }).click();
    await page.getByText("No endpoints yet.").waitFor({ timeout: WAIT });
    await context.close();
  });

  test("an owner's changes: widget settings saved, a member invited, a list chosen, orders filtered", { timeout: TEST_TIMEOUT }, async () => {
    const member = await join_(server, partner.superuserId, "oona@example.com", "owner");
    const { context, page } = await signedInPage(browser, server, member);
    // Widget settings: saved, then read back from the server.
    await page.goto(`${server.base}/dashboard/#/widget`);
    await heading(page, "Widget");
    await settled(page);
    await page.getByLabel("Button text").fill("Back to the shop");
    await page.getByLabel("Allowed origins").fill("https://shop.example\n\nhttps://www.shop.example:8443\n");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByText("Saved.", { exact: true }).waitFor({ timeout: WAIT });
    const saved = await call(server, "/v1/dashboard/widget", { method: "GET", cookie: member.cookie });
    assert.equal(saved.body.widgetText, "Back to the shop");
    assert.deepEqual(saved.body.widgetOrigins, ["https://shop.example", "https://www.shop.example:8443"]);
    assert.equal(await page.getByLabel("Allowed origins").inputValue(), "https://shop.example\nhttps://www.shop.example:8443");
    // An invitation: its link shown once, the invitation pending on the page.
    await page.goto(`${server.base}/dashboard/#/team`);
    await heading(page, "Team");
    await settled(page);
    await page.getByLabel("Email", { exact: true }).fill("newcomer@example.com");
    await page.getByLabel("Role", { exact: true }).selectOption("viewer");
    await page.getByRole("button", { name: "Create invitation" }).click();
    const link = page.locator("#invitation-link");
    await link.waitFor({ timeout: WAIT });
    assert.match(await link.inputValue(), /\/dashboard\/#invite=inv_[A-Za-z0-9_-]{43}$/);
    await page.getByRole("cell", { name: "newcomer@example.com", exact: true }).waitFor({ timeout: WAIT });
    await nothingStored(page);
    // Contacts: the lists switch, the pressed one says so.
    await page.goto(`${server.base}/dashboard/#/contacts`);
    await heading(page, "Contacts");
    await settled(page);
    await page.getByRole("button", { name: "Locked" }).click();
    assert.equal(await page.getByRole("button", { name: "Locked" }).getAttribute("aria-pressed"), "true");
    assert.equal(await page.getByRole("button", { name: "KYC passed, 2FA off" }).getAttribute("aria-pressed"), "false");
    // Orders: the CSV link carries the filters applied, and only those.
    await page.goto(`${server.base}/dashboard/#/orders`);
    await heading(page, "Orders");
    await settled(page);
    await page.getByLabel("Coin").fill(" btc ");
    await page.getByLabel("Status").selectOption("completed");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await settled(page);
    assert.equal(await page.locator("#orders-csv").getAttribute("href"), "/v1/dashboard/orders.csv?status=completed&coin=btc");
    await context.close();
  });

  test("CSRF: no token, another session's, another origin", { timeout: 60000 }, async () => {
    const a = await join_(server, partner.superuserId, "csrf-a@example.com", "owner");
    const b = await join_(server, partner.superuserId, "csrf-b@example.com", "owner");
    const before = (await call(server, "/v1/dashboard/keys", { method: "GET", cookie: a.cookie })).body.secretKey.last4;
    const roll = { expiresIn: "1h" };
    for (const [what, options] of [
      ["no token", { cookie: a.cookie }],
      ["another session's token", { cookie: a.cookie, csrf: b.csrf }],
      ["another origin", { cookie: a.cookie, csrf: a.csrf, origin: "http://127.0.0.2:9" }],
    ]) {
      const r = await call(server, "/v1/dashboard/keys/roll", { body: roll, ...options });
      assert.deepEqual([r.status, r.body.message], [403, "CSRF check failed."], what);
    }
    // A page on another site posting with the browser's cookies: the cookie is SameSite=Strict
    // and the origin is wrong, so nothing changes.
    const site = await startPartnerSite({ host: "127.0.0.2", dir });
    try {
      const { context, page } = await signedInPage(browser, server, a);
      await page.goto(`${site.origin}/static.html`);
      await page.evaluate(async (url) => {
        await fetch(url, { method: "POST", mode: "no-cors", credentials: "include", headers: { "content-type": "text/plain" }, body: '{"expiresIn":"now"}' }).catch(() => {});
      }, `${server.base}/v1/dashboard/keys/roll`);
      await context.close();
    } finally {
      await site.stop();
    }
    const after_ = (await call(server, "/v1/dashboard/keys", { method: "GET", cookie: a.cookie })).body.secretKey.last4;
    assert.equal(after_, before, "the key was not rolled");
  });

  test("the session ends after 30 idle minutes", { timeout: TEST_TIMEOUT }, async () => {
    const member = await join_(server, partner.superuserId, "idle@example.com", "viewer");
    const { context, page } = await signedInPage(browser, server, member);
    await page.goto(`${server.base}/dashboard/#/overview`);
    await heading(page, "Overview");
    setAhead(31 * 60);
    try {
      await page.goto(`${server.base}/dashboard/#/audit`);
      await heading(page, "Sign in");
      await page.getByText("Your session ended. Sign in again.").waitFor({ timeout: WAIT });
    } finally {
      setAhead(0);
      await context.close();
    }
  });

  test("nothing secret reaches the server's log", { timeout: TEST_TIMEOUT }, async () => {
    // After the flows above: invitation and session tokens, passwords, keys, codes and
    // authenticator secrets never appear; each request is one line with its route template.
    const member = await join_(server, partner.superuserId, "log@example.com", "owner");
    const rolled = await call(server, "/v1/dashboard/keys/roll", { body: { expiresIn: "now" }, cookie: member.cookie, csrf: member.csrf });
    assert.equal(rolled.status, 200);
    const log = server.log.join("\n");
    for (const secret of [PASSWORD, member.secret, member.cookie.split("=")[1], member.csrf, rolled.body.secretKey, "inv_", "ds_", "sk_sandbox_", "data:image"]) {
      assert.ok(!log.includes(secret), `the log holds ${secret.slice(0, 12)}...`);
    }
    assert.match(log, /method=POST route="\/v1\/dashboard\/keys\/roll" status=200/);
  });

  test("the key roll by keyboard alone", { timeout: TEST_TIMEOUT }, async () => {
    const member = await join_(server, partner.superuserId, "keys@example.com", "developer");
    const { context, page } = await signedInPage(browser, server, member);
    await page.goto(`${server.base}/dashboard/#/keys`);
    await heading(page, "API keys");
    await settled(page);
    const focused = () => page.evaluate(() => (document.activeElement.textContent || "").trim());
    for (let i = 0; i < 40 && (await focused()) !== "Roll secret key"; i++) await page.keyboard.press("Tab");
    assert.equal(await focused(), "Roll secret key");
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog");
    await dialog.waitFor({ timeout: WAIT });
    // Onto the choices, "In 7 days" with the arrow keys, then Tab to the roll button.
    const onRadio = () => page.evaluate(() => document.activeElement.type === "radio");
    for (let i = 0; i < 10 && !(await onRadio()); i++) await page.keyboard.press("Tab");
    const checked = () => page.evaluate(() => document.querySelector("input[type=radio]:checked")?.value);
    for (let i = 0; i < 4 && (await checked()) !== "7d"; i++) await page.keyboard.press("ArrowDown");
    assert.equal(await checked(), "7d");
    for (let i = 0; i < 10 && (await focused()) !== "Roll key"; i++) await page.keyboard.press("Tab");
    assert.equal(await focused(), "Roll key");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => [...document.querySelectorAll("input[readonly], textarea[readonly]")].some((e) => e.value.startsWith("sk_sandbox_")), null, { timeout: WAIT });
    const shown = await page.evaluate(() => [...document.querySelectorAll("input[readonly], textarea[readonly]")].map((e) => e.value).find((v) => v.startsWith("sk_sandbox_")));
    // It works at once; the page never stored it.
    const r = await fetch(`${server.base}/v1/auth/2fa?contactId=${crypto.randomUUID()}`, { headers: { authorization: `Bearer ${shown}` } });
    assert.equal(r.status, 200);
    await nothingStored(page);
    await page.keyboard.press("Escape");
    await context.close();
  });
});
