// The checkout (SPEC 6.3, docs/DESIGN.md "Widget purchase flow"): the widget session, sign-in
// by email code, the 2FA step (verify, or set up: QR, manual key, enable), the sandbox KYC
// mark, the order, and the screens sign-in, 2FA, 2FA setup and confirmation, plus the review's
// purchase controls. Which screen comes next is flow.ts's `checkoutStep`; the page (app.ts)
// renders the frame, the review's summary and the navigation.
//
// The session's bearer token stays inside api.ts's `Session` closure. The 2FA setup's QR code
// and key live only in the setup screen's DOM (one element kept while the screen is shown) and
// are cleared when the person leaves it. Nothing here reaches the parent but an order's id and
// status.

import type { Config, Failure, Fetch, Order, Outcome, Session, SessionState, TwoFactorSetup } from "./api";
import { openSession } from "./api";
import type { Child, builder } from "./dom";
import { checkoutStep, mayBuy, orderIssuePart, type Access, type Part, type Plan, type Selection, type Step } from "./flow";

/** The server's answer when a session token is unknown, closed or idle (401). */
export const SESSION_EXPIRED = "Widget session expired, sign in again";
/** Shown on the sign-in screen after that answer. */
export const SESSION_EXPIRED_NOTICE = "Your session expired. Sign in again.";
/** The review's text when the server takes no orders. */
export const PURCHASES_UNAVAILABLE = "Purchases are unavailable on this server.";
/** The local check of an empty 2FA code (the server would say "Google 2FA requires the token to
 * be passed in"). */
export const CODE_MISSING = "Enter the 6-digit code from your authenticator app";
/** Why the setup screen is there. */
export const SETUP_REQUIRED = "2FA is required before you can buy.";

/** What the checkout needs from the page (app.ts). */
export interface Host {
  readonly h: ReturnType<typeof builder>;
  readonly fetch: Fetch;
  readonly clipboard?: { writeText(text: string): Promise<void> };
  readonly setTimeout?: (fn: () => void, ms: number) => unknown;
  publicKey(): string;
  /** The embedding origin the page talks to, or null. */
  origin(): string | null;
  clientName(): string;
  config(): Config;
  plan(): Plan;
  selection(): Selection;
  /** The screen shown now. */
  current(): string;
  /** The screen's one `h1` (focus target of a new screen). */
  heading(text: string): HTMLElement;
  /** A form with the current step's alert and its actions row (Back, the primary submit). */
  form(step: Step, onSubmit: () => void, children: Child[], primary: string | null, disabled?: boolean): HTMLElement;
  /** A labelled input with its errors linked through aria-describedby. */
  field(id: string, label: string, value: string, onInput: (value: string) => void, errors: string[], attrs: { [name: string]: string }, focus?: boolean): Child[];
  /** Moves to a screen (focus to its heading). */
  go(step: Step): void;
  /** Renders the current screen again with this alert ("" for none); focus to the field in error,
   * else the preferred field, else the primary button. `passive` (an answer the person did not
   * just ask for): focus on the heading stays there. */
  refresh(alert?: string, passive?: boolean): void;
  /** Whether a request of the current screen is under way. */
  busy(): boolean;
  /** Runs a request: `button` (default the primary) says `label` and refuses clicks meanwhile. */
  working<T>(label: string, task: () => Promise<T>, button?: HTMLElement): Promise<T>;
  /** Says `text` in the page's polite live region. */
  say(text: string): void;
  /** The page's explanation of a failed request. */
  failureText(failure: Failure): string;
  /** Tells the parent about the order. */
  ordered(order: Order): void;
}

export class Checkout {
  private readonly host: Host;
  private session: Session | null = null;
  private opening: Promise<Session | null> | null = null;
  private state: SessionState | null = null;
  /** Sign-in. */
  private email = "";
  private code = "";
  private codeSent = false;
  private sandboxCode: string | null = null;
  private notice = "";
  /** The 2FA code typed on the verify or setup screen. */
  private totp = "";
  /** Errors by field id (`email`, `signin-code`, `twofactor-code`, `setup-code`). */
  private errors: { [field: string]: string[] } = {};
  /** Retry-After of a throttled 2FA attempt: the submit waits. */
  private waitSeconds = 0;
  private waitRound = 0;
  private locked = false;
  /** The setup screen's QR code and key, only while that screen is shown. */
  private setupNode: HTMLElement | null = null;
  private setupLoading = false;
  private setupFailure = "";
  /** Why the session could not be opened ("" when it was). */
  private openFailure = "";
  /** An order's 400, shown at the review next to the part it names. */
  private orderIssue: { part: Part | null; message: string } | null = null;
  private order: Order | null = null;

  constructor(host: Host) {
    this.host = host;
  }

  access(): Access {
    return { purchases: this.host.plan().purchases, session: this.state };
  }

  /** The sandbox sign-in code for the page's sandbox banner, while the sign-in screen shows. */
  banner(): string | null {
    return this.host.current() === "signin" ? this.sandboxCode : null;
  }

  /** The order's 400 at the review, when it names `part`. */
  issueAt(part: Part): string | null {
    return this.orderIssue && this.orderIssue.part === part ? this.orderIssue.message : null;
  }

  /** Runs when the page moves from screen `from` to screen `to`. */
  arrive(from: string, to: string): void {
    if (from === "setup" && to !== "setup") this.clearSetup();
    if (from === "review") this.orderIssue = null;
    if (to === "signin" && !this.session) {
      void this.ensure().then((session) => {
        if (!session && this.host.current() === "signin") this.host.refresh(this.openFailure, true);
      });
    }
    if (to === "setup" && !this.setupNode) void this.loadSetup();
  }

  // ---- the session ----------------------------------------------------------------------------

  /** The session, opened the first time it is needed; null when it could not be opened
   * (`openFailure` says why). */
  private ensure(): Promise<Session | null> {
    if (this.session) return Promise.resolve(this.session);
    if (!this.opening) {
      this.opening = openSession(this.host.fetch, this.host.publicKey(), this.host.origin()).then((answer) => {
        this.opening = null;
        if (!answer.ok) {
          this.openFailure = this.host.failureText(answer.failure);
          return null;
        }
        this.openFailure = "";
        this.session = answer.value.session;
        this.state = answer.value.state;
        return this.session;
      });
    }
    return this.opening;
  }

  /** A 401 "session expired": forget the session, keep the selection, sign in again. */
  private expired(failure: Failure): boolean {
    if (failure.status !== 401 || failure.message !== SESSION_EXPIRED) return false;
    this.session = null;
    this.opening = null;
    this.state = null;
    this.codeSent = false;
    this.sandboxCode = null;
    this.code = "";
    this.totp = "";
    this.errors = {};
    this.notice = SESSION_EXPIRED_NOTICE;
    if (this.host.current() === "signin") this.arrive("signin", "signin");
    this.host.go("signin");
    return true;
  }

  /** A request through the session (opened if need be); null when it could not run or the
   * session expired (both already shown). */
  private async call<T>(label: string, task: (session: Session) => Promise<Outcome<T>>, button?: HTMLElement): Promise<Outcome<T> | null> {
    if (this.host.busy()) return null;
    const at = this.host.current();
    const answer = await this.host.working(
      label,
      async () => {
        const session = await this.ensure();
        return session ? task(session) : null;
      },
      button,
    );
    if (!answer) {
      if (this.host.current() === at) this.host.refresh(this.openFailure || "The widget could not start a session. Try again.");
      return null;
    }
    if (!answer.ok && this.expired(answer.failure)) return null;
    // The person moved on meanwhile: a failure of the screen they left is not shown.
    if (!answer.ok && this.host.current() !== at) return null;
    return answer;
  }

  /** The new state: on to the screen it calls for. */
  private advance(state: SessionState): void {
    this.state = state;
    this.host.go(checkoutStep(this.access()));
  }

  /** Asks the server where the session stands, then goes there. */
  private async reload(): Promise<void> {
    const answer = await this.call("Checking…", (s) => s.state());
    if (!answer) return;
    if (answer.ok) this.advance(answer.value.session);
    else this.host.refresh(this.host.failureText(answer.failure));
  }

  // ---- sign-in --------------------------------------------------------------------------------

  private async sendCode(button?: HTMLElement): Promise<void> {
    const email = this.email.trim();
    const answer = await this.call("Sending…", (s) => s.requestCode(email), button);
    if (!answer) return;
    this.errors = {};
    if (answer.ok) {
      this.codeSent = true;
      this.sandboxCode = typeof answer.value.sandboxCode === "string" && answer.value.sandboxCode ? answer.value.sandboxCode : null;
      this.code = "";
      this.notice = "";
      this.host.refresh();
      this.host.say("Sign-in code sent to " + email + ".");
      return;
    }
    const f = answer.failure;
    if (f.status === 400 || f.status === 429) {
      // The email is wrong, or too many codes went to it: said at the email field.
      this.codeSent = false;
      this.errors.email = [f.message || this.host.failureText(f)];
      this.host.refresh();
    } else {
      this.host.refresh(f.message && f.status === 503 ? f.message : this.host.failureText(f));
    }
  }

  private async signIn(): Promise<void> {
    const answer = await this.call("Signing in…", (s) => s.signIn(this.email.trim(), this.code.trim()));
    if (!answer) return;
    this.errors = {};
    if (answer.ok) {
      this.codeSent = false;
      this.sandboxCode = null;
      this.code = "";
      this.notice = "";
      // Another contact may have signed in: no earlier 2FA wait or lock applies.
      this.locked = false;
      this.waitSeconds = 0;
      this.waitRound++;
      this.advance(answer.value.session);
      return;
    }
    const f = answer.failure;
    if (f.status === 401 || f.status === 429) this.errors["signin-code"] = [f.message || this.host.failureText(f)];
    else if (f.status === 400 && f.message.indexOf("email") === 0) {
      this.codeSent = false;
      this.errors.email = [f.message];
    } else if (f.status === 400) this.errors["signin-code"] = [f.message];
    else {
      this.host.refresh(f.message && f.status === 503 ? f.message : this.host.failureText(f));
      return;
    }
    this.host.refresh();
  }

  signInScreen(): Child[] {
    const h = this.host.h;
    const sandbox = this.host.config().environment === "sandbox";
    const notice = this.notice ? h("p", { class: "notice", role: "alert" }, this.notice) : null;
    if (!this.codeSent) {
      return [
        this.host.heading("Sign in"),
        notice,
        h("p", null, "Sign in with your email address to buy. We send you a 6-digit code."),
        this.host.form(
          "signin",
          () => void this.sendCode(),
          [h("div", { class: "field" }, this.host.field("email", "Email", this.email, (v) => (this.email = v), this.errors.email || [], { type: "email", autocomplete: "email", spellcheck: "false", autocapitalize: "off" }, true))],
          "Send code",
        ),
      ];
    }
    const again: HTMLElement = h("button", { type: "button", class: "secondary", onclick: () => void this.sendCode(again) }, "Send a new code");
    return [
      this.host.heading("Sign in"),
      notice,
      h("p", null, "We sent a 6-digit code to ", h("strong", null, this.email.trim()), ".", sandbox ? " Sandbox: no email is sent; the code is shown at the top." : null),
      this.host.form(
        "signin",
        () => void this.signIn(),
        [
          h("div", { class: "field" }, this.host.field("signin-code", "Sign-in code", this.code, (v) => (this.code = v), this.errors["signin-code"] || [], { inputmode: "numeric", autocomplete: "one-time-code" }, true)),
          h(
            "div",
            { class: "more" },
            again,
            h(
              "button",
              {
                type: "button",
                class: "secondary",
                onclick: () => {
                  this.codeSent = false;
                  this.sandboxCode = null;
                  this.code = "";
                  this.errors = {};
                  this.host.refresh();
                },
              },
              "Use another email",
            ),
          ),
        ],
        "Sign in",
      ),
    ];
  }

  // ---- the 2FA step ---------------------------------------------------------------------------

  /** Verify or enable with the typed code. */
  private async submitCode(step: "twofactor" | "setup"): Promise<void> {
    if (this.waitSeconds || this.locked) return;
    const field = step + "-code";
    const code = this.totp.trim();
    if (!code) {
      this.errors = { [field]: [CODE_MISSING] };
      this.host.refresh();
      return;
    }
    const answer = await this.call(step === "setup" ? "Turning on…" : "Verifying…", (s) => (step === "setup" ? s.enableTwoFactor(code) : s.verify(code)));
    if (!answer) return;
    this.errors = {};
    if (answer.ok) {
      this.totp = "";
      this.advance(answer.value.session);
      return;
    }
    const f = answer.failure;
    if (f.status === 423) {
      this.locked = true;
      this.host.refresh();
    } else if (f.kind === "rate_limited") {
      this.errors[field] = [f.message || this.host.failureText(f)];
      this.wait(f.seconds);
    } else if (f.status === 401) {
      this.errors[field] = [f.message];
      this.host.refresh();
    } else if (f.status === 409 && step === "setup" && f.message.indexOf("Must create") === 0) {
      // The QR code's secret expired before it was enabled: a new one.
      this.errors[field] = ["This QR code has expired. Scan the new one, then enter its code."];
      this.totp = "";
      this.clearSetup();
      this.host.refresh();
      void this.loadSetup();
    } else if (f.status === 409 || f.status === 403) {
      // The session's 2FA step moved on meanwhile (enabled elsewhere): where it stands now.
      await this.reload();
    } else {
      this.host.refresh(this.host.failureText(f));
    }
  }

  /** A throttled attempt: the submit waits `seconds`. */
  private wait(seconds: number): void {
    const round = ++this.waitRound;
    this.waitSeconds = seconds;
    this.host.refresh();
    const done = (): void => {
      if (round !== this.waitRound) return;
      this.waitSeconds = 0;
      const at = this.host.current();
      if (at === "twofactor" || at === "setup") {
        this.host.refresh("", true);
        this.host.say("You can try the code again now.");
      }
    };
    if (this.host.setTimeout) this.host.setTimeout(done, seconds * 1000);
  }

  /** The code field and submit of the verify and setup screens (none when locked). */
  private codeForm(step: "twofactor" | "setup", primary: string): Child {
    const h = this.host.h;
    const id = step + "-code";
    if (this.locked) {
      return [
        h("p", { class: "error", role: "alert" }, "2FA is locked after too many failed attempts"),
        h("p", null, "No code can be checked until it is unlocked. Contact the support of " + this.host.clientName() + " to unlock it."),
        this.host.form(step, () => undefined, [], null),
      ];
    }
    const errors = (this.errors[id] || []).concat(this.waitSeconds ? ["Wait " + this.waitSeconds + " second" + (this.waitSeconds === 1 ? "" : "s") + ", then try again."] : []);
    return this.host.form(
      step,
      () => void this.submitCode(step),
      [h("div", { class: "field" }, this.host.field(id, "Authenticator code", this.totp, (v) => (this.totp = v), errors, { inputmode: "numeric", autocomplete: "one-time-code", spellcheck: "false" }, true))],
      primary,
      this.waitSeconds > 0,
    );
  }

  twoFactorScreen(): Child[] {
    const h = this.host.h;
    return [
      this.host.heading("Two-factor authentication"),
      h("p", null, "Enter the 6-digit code your authenticator app shows for this account."),
      this.codeForm("twofactor", "Verify"),
    ];
  }

  private async loadSetup(): Promise<void> {
    if (this.setupLoading) return;
    this.setupLoading = true;
    const session = await this.ensure();
    const answer: Outcome<TwoFactorSetup> | null = session ? await session.createTwoFactor() : null;
    this.setupLoading = false;
    if (this.host.current() !== "setup") return;
    if (!answer) {
      this.host.refresh(this.openFailure, true);
      return;
    }
    if (!answer.ok) {
      if (this.expired(answer.failure)) return;
      if (answer.failure.status === 403) {
        // 2FA is enabled already: the session's step is verify now.
        await this.reload();
        return;
      }
      this.setupFailure = this.host.failureText(answer.failure);
      this.host.refresh("", true);
      return;
    }
    this.setupFailure = "";
    this.setupNode = this.setupElement(answer.value);
    this.host.refresh("", true);
  }

  /** The QR code and the key, built once per create: the only place either is kept. */
  private setupElement(setup: TwoFactorSetup): HTMLElement {
    const h = this.host.h;
    const key = h("code", { id: "setup-key", class: "key" }, (setup.manual.match(/.{1,4}/g) || []).join(" "));
    return h(
      "div",
      { class: "setup" },
      h("img", {
        class: "qr",
        src: setup.qrCode,
        alt: "QR code for your authenticator app",
        width: "180",
        height: "180",
        // Shown at a whole multiple of its own pixels (at least 180): every module stays sharp.
        onload: (event: Event) => {
          const img = event.target as HTMLImageElement;
          const size = img.naturalWidth;
          if (size > 0) {
            const shown = size * Math.max(1, Math.ceil(180 / size));
            img.setAttribute("width", String(shown));
            img.setAttribute("height", String(Math.round((img.naturalHeight / size) * shown)));
          }
        },
      }),
      h(
        "div",
        { class: "manual" },
        h("p", null, "Scan it with an authenticator app, or enter this key:"),
        key,
        h(
          "button",
          {
            type: "button",
            class: "secondary",
            onclick: () => {
              // The exact key: the groups' spaces are for reading only.
              const exact = key.textContent ? key.textContent.replace(/\s+/g, "") : "";
              const clipboard = this.host.clipboard;
              const fallback = (): void => this.host.say("Select the key and copy it.");
              if (clipboard) clipboard.writeText(exact).then(() => this.host.say("Key copied."), fallback);
              else fallback();
            },
          },
          "Copy key",
        ),
      ),
    );
  }

  private clearSetup(): void {
    const node = this.setupNode;
    this.setupNode = null;
    this.setupFailure = "";
    if (!node) return;
    const walk = (el: Element): void => {
      if (el.tagName === "IMG") el.removeAttribute("src");
      if (el.tagName === "CODE") el.textContent = "";
      for (const child of Array.prototype.slice.call(el.children || []) as Element[]) walk(child);
    };
    walk(node);
    if (node.parentNode) node.parentNode.removeChild(node);
  }

  setupScreen(): Child[] {
    const h = this.host.h;
    return [
      this.host.heading("Set up two-factor authentication"),
      h("p", null, SETUP_REQUIRED),
      this.setupFailure
        ? h("div", { role: "alert" }, h("p", { class: "error" }, this.setupFailure), h("p", null, h("button", { type: "button", class: "secondary", onclick: () => void this.loadSetup() }, "Try again")))
        : this.setupNode || h("p", { class: "loading", role: "status", "aria-busy": "true" }, h("span", { class: "spinner", "aria-hidden": "true" }), "Loading…"),
      this.codeForm("setup", "Turn on 2FA"),
    ];
  }

  // ---- the review's controls and the order ----------------------------------------------------

  private async markKyc(button: HTMLElement): Promise<void> {
    const answer = await this.call("Marking…", (s) => s.markKyc(), button);
    if (!answer) return;
    if (!answer.ok) {
      this.host.refresh(this.host.failureText(answer.failure));
      return;
    }
    this.state = answer.value.session;
    const next = checkoutStep(this.access());
    if (next === this.host.current()) this.host.refresh();
    else this.host.go(next);
    this.host.say("Marked as KYC passed.");
  }

  private async buy(): Promise<void> {
    if (!mayBuy(this.access())) {
      this.host.go(checkoutStep(this.access()));
      return;
    }
    const sel = this.host.selection();
    const request = { coin: sel.coin, amount: sel.amount, currency: sel.currency, address: sel.addresses[sel.coin] || "" };
    this.orderIssue = null;
    const answer = await this.call("Buying…", (s) => s.buy(request));
    if (!answer) return;
    if (answer.ok) {
      this.order = answer.value.order;
      this.host.ordered(this.order);
      this.host.go("confirmation");
      return;
    }
    const f = answer.failure;
    if (f.status === 403 && f.message === "2FA is required before buying") {
      await this.reload();
    } else if (f.status === 400) {
      this.orderIssue = { part: orderIssuePart(f.message), message: f.message };
      this.host.refresh(this.orderIssue.part ? "" : f.message);
    } else {
      this.host.refresh(f.status === 503 && f.message ? f.message : this.host.failureText(f));
    }
  }

  /** The review's purchase part: the unavailable notice, or Buy now (only when the session may
   * buy), the sandbox KYC control. `link` is the copy-link part, primary when nothing is bought. */
  reviewControls(link: (primary: boolean) => Child): Child[] {
    const h = this.host.h;
    const access = this.access();
    const state = this.state;
    const out: Child[] = [];
    if (!access.purchases) {
      out.push(h("p", { class: "notice", role: "status" }, PURCHASES_UNAVAILABLE));
      out.push(link(true));
      return out;
    }
    const buy = mayBuy(access);
    out.push(this.host.form("review", () => void this.buy(), [], buy ? "Buy now" : null));
    if (state && state.signedIn && state.environment === "sandbox" && !state.kycPassed) {
      const kyc: HTMLElement = h("button", { type: "button", class: "secondary", onclick: () => void this.markKyc(kyc) }, "Mark me as KYC passed (sandbox)");
      out.push(h("div", { class: "more" }, kyc));
    }
    out.push(link(false));
    return out;
  }

  confirmationScreen(): Child[] {
    const h = this.host.h;
    const order = this.order;
    if (!order) return [this.host.heading("No purchase yet")];
    const config = this.host.config();
    const coin = order.coin.toUpperCase();
    const currency = order.currency.toUpperCase();
    const row = (term: string, value: Child): Child[] => [h("dt", null, term), h("dd", null, value)];
    const title = order.status === "failed" ? "Purchase failed" : order.status === "completed" ? "Purchase complete" : "Purchase received";
    const coinName = config.coins.filter((c) => c.symbol === order.coin)[0];
    const url = config.widgetButtonURL;
    const button = config.widgetText && url && /^https?:\/\//i.test(url) ? h("div", { class: "actions" }, h("a", { class: "button primary", href: url, target: "_top", rel: "noopener" }, config.widgetText)) : null;
    return [
      this.host.heading(title),
      h("p", null, order.status === "failed" ? "The order did not go through. No coins were bought." : "Keep the order ID in case you contact " + this.host.clientName() + "."),
      h(
        "dl",
        { class: "summary" },
        row("Order ID", h("code", { id: "order-id" }, order.orderId)),
        row("Coin", (coinName ? coinName.name : coin) + " (" + coin + ")"),
        row("Amount", order.amount + " " + currency),
        row("Quantity", order.quantity + " " + coin),
        row("Price", "1 " + coin + " = " + order.price + " " + currency),
        row("Receive address", h("span", { class: "mono" }, order.address)),
      ),
      button,
    ];
  }
}
