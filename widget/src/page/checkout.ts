// The checkout (SPEC 6.3, docs/DESIGN.md "Widget purchase flow"): the widget session, sign-in
// by email code, the 2FA step (verify, or set up: QR, manual key, enable), recovery (SPEC 8.3:
// the codes shown once after enable, a recovery code in place of a lost authenticator, new codes
// when few are left), the sandbox KYC mark, the order, and the screens sign-in, 2FA, 2FA setup,
// recovery and confirmation, plus the review's purchase controls (Buy, the purchase hold of
// SPEC 8.2). Which screen comes next is flow.ts's `checkoutStep`; the page (app.ts) renders the
// frame, the review's summary and the navigation.
//
// The session's bearer token stays inside api.ts's `Session` closure. The 2FA setup's QR code
// and key, and the recovery codes, live only in their screen's DOM (one element kept while the
// screen is shown; Copy and Download read it) and are cleared when the person leaves it: never
// in a field of this object, storage, a URL, the console or a message. Nothing here reaches the
// parent but an order's id and status.

import type { Config, Failure, Fetch, Order, Outcome, Session, SessionState, TwoFactorSetup } from "./api";
import { openSession, recoveryCodes } from "./api";
import type { Child, builder } from "./dom";
import { checkoutStep, fewCodesLeft, holdUntil, mayBuy, orderIssuePart, type Access, type Part, type Plan, type Selection, type Step } from "./flow";
import type { ScreenName } from "./messenger";

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
/** Why the review sends the person to the 2FA code. */
export const VERIFY_REQUIRED = "Enter your 2FA code before you buy.";
/** The verify screen's way out when the authenticator is gone. */
export const LOST_AUTHENTICATOR = "Lost your authenticator? Use a recovery code";
/** The local check of an empty recovery code. */
export const RECOVERY_MISSING = "Enter one of your recovery codes";
/** A recovery code the server refused (401): wrong, or used already. */
export const RECOVERY_FAILED = "This recovery code does not work. Check it, or use another one: each code works once.";
/** The codes screen's confirmation, and what Continue says without it. */
export const CODES_SAVED = "I saved my recovery codes";
export const CODES_NOT_SAVED = "Save your recovery codes, then tick the box to continue.";
/** The file Download writes: the codes, one per line, nothing else. */
export const CODES_FILE = "rampart-recovery-codes.txt";
/** The order's answer during a purchase hold starts so (SPEC 8.2). */
const HOLD_PREFIX = "Purchases are on hold";

/** Shows `button` refused (`aria-disabled`, styled off) or not. */
function off(button: HTMLElement, refused: boolean): void {
  if (refused) button.setAttribute("aria-disabled", "true");
  else button.removeAttribute("aria-disabled");
  button.setAttribute("class", refused ? "primary off" : "primary");
}

/** The hold's end for people: in their locale and time zone (named), and unambiguous in UTC
 * (`2026-11-27 18:00 UTC`; null when the local time is UTC already). */
export function holdTimes(until: Date): { local: string; utc: string | null } {
  let local: string;
  try {
    local = until.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "numeric", minute: "2-digit", timeZoneName: "short" });
  } catch {
    local = until.toString();
  }
  return { local, utc: /\bUTC$/.test(local) ? null : until.toISOString().slice(0, 16).replace("T", " ") + " UTC" };
}

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
  /** A form with the current step's alert and its actions row (Back, the primary submit);
   * `disabled` with `why` (the id of what says why): refused until something changes. */
  form(step: Step, onSubmit: () => void, children: Child[], primary: string | null, disabled?: boolean, why?: string): HTMLElement;
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
  /** A checkbox with its label and its errors linked through aria-describedby. */
  checkbox(id: string, label: string, checked: boolean, onChange: (checked: boolean) => void, errors: string[]): Child[];
  /** The current screen's primary button, once rendered. */
  primary(): HTMLElement | undefined;
  /** Offers `text` as a file download named `name`; absent where the browser cannot. */
  readonly saveFile?: (name: string, text: string) => void;
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
  /** The 2FA code typed on the verify, setup or new-codes screen. */
  private totp = "";
  /** The recovery code typed on the recover screen. */
  private recoveryCode = "";
  /** Errors by field id (`email`, `signin-code`, `twofactor-code`, `setup-code`,
   * `newcodes-code`, `recovery-code`, `codes-saved`). */
  private errors: { [field: string]: string[] } = {};
  /** Retry-After of a throttled attempt, per factor (the server throttles authenticator codes
   * and recovery codes apart): that factor's submit waits. */
  private waits = { token: 0, recovery: 0 };
  /** Each factor's latest wait: an earlier wait's timer of that factor does nothing. */
  private waitRounds = { token: 0, recovery: 0 };
  private locked = false;
  /** This page turned 2FA off with a recovery code (said on the setup and review screens). */
  private recovered = false;
  /** The setup screen's QR code and key, only while that screen is shown. */
  private setupNode: HTMLElement | null = null;
  /** The recovery codes' list, only while the codes screen is shown; the step it reports as. */
  private codesNode: HTMLElement | null = null;
  private codesFrom: ScreenName = "setup";
  private codesSaved = false;
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

  /** The screen name the parent hears for `step`: the recovery screens are part of the 2FA step
   * they belong to (the envelope's names stay as published). */
  screenName(step: Step): ScreenName {
    if (step === "recover" || step === "newcodes") return "twofactor";
    if (step === "codes") return this.codesFrom;
    return step;
  }

  /** Runs when the page moves from screen `from` to screen `to`. */
  arrive(from: string, to: string): void {
    if (from === "setup" && to !== "setup") this.clearSetup();
    if (from === "codes" && to !== "codes") this.clearCodes();
    if (from === "review") this.orderIssue = null;
    // A code typed on a 2FA screen, and its errors, stay with that screen.
    if (from === "twofactor" || from === "setup" || from === "newcodes" || from === "recover") {
      this.totp = "";
      this.recoveryCode = "";
      this.errors = {};
    }
    // A hold may have ended (or been set) meanwhile: the review asks.
    if (to === "review" && holdUntil(this.state)) void this.recheck();
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
    this.recoveryCode = "";
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

  /** The review's quiet look at the session while a hold is shown: when it has ended, Buy comes
   * back. An expired session goes to the sign-in as anywhere; another failure is not the
   * person's request and is not shown (Buy stays refused). */
  private async recheck(): Promise<void> {
    const session = this.session;
    if (!session) return;
    const answer = await session.state();
    if (this.session !== session) return;
    if (!answer.ok) {
      if (this.host.current() === "review" && !this.host.busy()) this.expired(answer.failure);
      return;
    }
    const before = holdUntil(this.state);
    this.state = answer.value.session;
    const after = holdUntil(this.state);
    const time = (d: Date | null): number => (d ? d.getTime() : 0);
    if (this.host.current() !== "review" || this.host.busy() || time(before) === time(after)) return;
    this.host.refresh("", true);
    if (!after) this.host.say("Purchases have resumed.");
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
      // Another contact may have signed in: no earlier 2FA wait, lock or recovery applies.
      this.locked = false;
      this.recovered = false;
      this.endWaits();
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

  /** Verify, enable or get new recovery codes with the typed authenticator code. */
  private async submitCode(step: "twofactor" | "setup" | "newcodes"): Promise<void> {
    if (this.waits.token || this.locked) return;
    const field = step + "-code";
    const code = this.totp.trim();
    if (!code) {
      this.errors = { [field]: [CODE_MISSING] };
      this.host.refresh();
      return;
    }
    type Answer = { session?: SessionState; recoveryCodes?: unknown; details?: { recoveryCodes?: unknown } };
    const answer = await this.call<Answer>(step === "setup" ? "Turning on…" : step === "newcodes" ? "Making codes…" : "Verifying…", (s) =>
      step === "setup" ? s.enableTwoFactor(code) : step === "newcodes" ? s.newRecoveryCodes(code) : s.verify(code),
    );
    if (!answer) return;
    this.errors = {};
    if (answer.ok) {
      this.totp = "";
      const value = answer.value;
      if (step === "newcodes") {
        const codes = recoveryCodes(value.details && value.details.recoveryCodes);
        if (codes && this.state) this.state = { ...this.state, recoveryCodesRemaining: codes.length };
        if (codes) this.showCodes(codes, "twofactor");
        else await this.reload();
        return;
      }
      const state = value.session as SessionState;
      const codes = step === "setup" ? recoveryCodes(value.recoveryCodes) : null;
      if (codes) {
        this.state = state;
        this.showCodes(codes, "setup");
      } else this.advance(state);
      return;
    }
    const f = answer.failure;
    if (f.status === 423) {
      this.locked = true;
      this.host.refresh();
    } else if (f.kind === "rate_limited") {
      this.errors[field] = [f.message || this.host.failureText(f)];
      this.wait("token", f.seconds);
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
      // The session's 2FA step moved on meanwhile (enabled or turned off elsewhere): where it
      // stands now.
      await this.reload();
    } else {
      this.host.refresh(this.host.failureText(f));
    }
  }

  /** A throttled attempt: that factor's submit waits `seconds`. */
  private wait(factor: "token" | "recovery", seconds: number): void {
    const round = ++this.waitRounds[factor];
    this.waits[factor] = seconds;
    this.host.refresh();
    const done = (): void => {
      if (round !== this.waitRounds[factor]) return;
      this.waits[factor] = 0;
      const at = this.host.current();
      if (factor === "recovery" ? at === "recover" : at === "twofactor" || at === "setup" || at === "newcodes") {
        this.host.refresh("", true);
        this.host.say("You can try the code again now.");
      }
    };
    if (this.host.setTimeout) this.host.setTimeout(done, seconds * 1000);
  }

  /** No wait applies any more (another contact, or 2FA turned off); pending timers do nothing. */
  private endWaits(): void {
    this.waits = { token: 0, recovery: 0 };
    this.waitRounds.token++;
    this.waitRounds.recovery++;
  }

  /** The wait after a throttled attempt, said under the field. */
  private waitText(factor: "token" | "recovery"): string[] {
    const n = this.waits[factor];
    return n ? ["Wait " + n + " second" + (n === 1 ? "" : "s") + ", then try again."] : [];
  }

  /** The way to a recovery code, from the verify screen. */
  private lostLink(): Child {
    const h = this.host.h;
    return h("div", { class: "more" }, h("button", { type: "button", class: "link", onclick: () => this.host.go("recover") }, LOST_AUTHENTICATOR));
  }

  /** The code field and submit of the verify, setup and new-codes screens (none when locked). */
  private codeForm(step: "twofactor" | "setup" | "newcodes", primary: string): Child {
    const h = this.host.h;
    const id = step + "-code";
    if (this.locked) {
      return [
        h("p", { class: "error", role: "alert" }, "2FA is locked after too many failed attempts"),
        h("p", null, "No code can be checked until it is unlocked. Contact the support of " + this.host.clientName() + " to unlock it."),
        // A recovery code still works while authenticator codes are locked (SPEC 8.1).
        step === "twofactor" ? this.lostLink() : null,
        this.host.form(step, () => undefined, [], null),
      ];
    }
    const errors = (this.errors[id] || []).concat(this.waitText("token"));
    return this.host.form(
      step,
      () => void this.submitCode(step),
      [h("div", { class: "field" }, this.host.field(id, "Authenticator code", this.totp, (v) => (this.totp = v), errors, { inputmode: "numeric", autocomplete: "one-time-code", spellcheck: "false" }, true))],
      primary,
      this.waits.token > 0,
    );
  }

  twoFactorScreen(): Child[] {
    const h = this.host.h;
    return [
      this.host.heading("Two-factor authentication"),
      h("p", null, "Enter the 6-digit code your authenticator app shows for this account."),
      this.codeForm("twofactor", "Verify"),
      this.locked ? null : this.lostLink(),
    ];
  }

  // ---- recovery (SPEC 8.3) --------------------------------------------------------------------

  /** A recovery code in place of the authenticator's: it turns 2FA off (the purchase hold
   * starts), then the flow goes where the session says (setup when 2FA is required). */
  private async submitRecovery(): Promise<void> {
    if (this.waits.recovery) return;
    const code = this.recoveryCode.trim();
    if (!code) {
      this.errors = { "recovery-code": [RECOVERY_MISSING] };
      this.host.refresh();
      return;
    }
    const answer = await this.call("Checking…", (s) => s.recover(code));
    if (!answer) return;
    this.errors = {};
    if (answer.ok) {
      this.recoveryCode = "";
      this.recovered = true;
      this.locked = false;
      this.endWaits();
      this.advance(answer.value.session);
      this.host.say("2FA is off: you used a recovery code.");
      return;
    }
    const f = answer.failure;
    if (f.kind === "rate_limited") {
      this.errors["recovery-code"] = [f.message || this.host.failureText(f)];
      this.wait("recovery", f.seconds);
    } else if (f.status === 401 || f.status === 400) {
      this.errors["recovery-code"] = [f.status === 401 ? RECOVERY_FAILED : f.message];
      this.host.refresh();
    } else if (f.status === 409 || f.status === 403) {
      await this.reload();
    } else {
      this.host.refresh(this.host.failureText(f));
    }
  }

  recoverScreen(): Child[] {
    const h = this.host.h;
    return [
      this.host.heading("Use a recovery code"),
      h("p", null, "Enter one of the recovery codes you saved when you turned on 2FA (six groups of four letters and digits)."),
      h("p", { class: "muted" }, "It turns 2FA off. You then set it up again with your new device, and purchases wait a while in case someone else has your codes."),
      this.host.form(
        "recover",
        () => void this.submitRecovery(),
        [
          h(
            "div",
            { class: "field" },
            this.host.field("recovery-code", "Recovery code", this.recoveryCode, (v) => (this.recoveryCode = v), (this.errors["recovery-code"] || []).concat(this.waitText("recovery")), { autocomplete: "off", spellcheck: "false", autocapitalize: "characters", class: "mono" }, true),
          ),
        ],
        "Use recovery code",
        this.waits.recovery > 0,
      ),
    ];
  }

  /** The codes screen, with `codes` (from enable or regenerate); it reports as `from`. */
  private showCodes(codes: string[], from: ScreenName): void {
    const h = this.host.h;
    this.clearCodes();
    this.codesNode = h("ol", { class: "codes", id: "recovery-codes", "aria-label": "Recovery codes" }, codes.map((code) => h("li", null, h("code", null, code))));
    this.codesFrom = from;
    this.codesSaved = false;
    this.errors = {};
    this.host.go("codes");
  }

  /** The codes as text, one per line, read from the screen (the only place they are). */
  private codesText(): string {
    const node = this.codesNode;
    const lines = node ? (Array.prototype.slice.call(node.children) as Element[]).map((li) => (li.textContent || "").trim()) : [];
    return lines.filter((line) => line).join("\n");
  }

  private clearCodes(): void {
    const node = this.codesNode;
    this.codesNode = null;
    this.codesSaved = false;
    if (!node) return;
    for (const li of Array.prototype.slice.call(node.children) as Element[]) li.textContent = "";
    if (node.parentNode) node.parentNode.removeChild(node);
  }

  codesScreen(): Child[] {
    const h = this.host.h;
    if (!this.codesNode) return [this.host.heading("Recovery codes"), h("p", null, "They were shown once and are gone from this page."), this.host.form("codes", () => this.host.go(checkoutStep(this.access())), [], "Continue")];
    const copy = (): void => {
      const clipboard = this.host.clipboard;
      const fallback = (): void => this.host.say("Select the codes and copy them.");
      if (clipboard) clipboard.writeText(this.codesText()).then(() => this.host.say("Recovery codes copied."), fallback);
      else fallback();
    };
    const save = this.host.saveFile;
    const download = (): void => {
      if (!save) return;
      save(CODES_FILE, this.codesText() + "\n");
      this.host.say("Recovery codes downloaded as " + CODES_FILE + ".");
    };
    const form = this.host.form(
      "codes",
      () => {
        if (!this.codesSaved) {
          this.errors = { "codes-saved": [CODES_NOT_SAVED] };
          this.host.refresh();
          return;
        }
        this.host.go(checkoutStep(this.access()));
      },
      [
        h(
          "div",
          { class: "field tight" },
          this.host.checkbox("codes-saved", CODES_SAVED, this.codesSaved, (checked) => {
            this.codesSaved = checked;
            // Continue shows whether it can go on, without a new render (focus stays on the box).
            const primary = this.host.primary();
            if (primary) off(primary, !checked);
          }, this.errors["codes-saved"] || []),
        ),
      ],
      "Continue",
    );
    const primary = this.host.primary();
    if (primary) off(primary, !this.codesSaved);
    return [
      this.host.heading("Save your recovery codes"),
      h("p", null, "Each code gets you in once if you lose your authenticator. Shown only now: keep them safe, away from this device."),
      this.codesNode,
      h(
        "div",
        { class: "more" },
        h("button", { type: "button", class: "secondary", onclick: copy }, "Copy codes"),
        save ? h("button", { type: "button", class: "secondary", onclick: download }, "Download (.txt)") : null,
      ),
      form,
    ];
  }

  newCodesScreen(): Child[] {
    const h = this.host.h;
    return [
      this.host.heading("Get new recovery codes"),
      h("p", null, "New codes replace the ones you have left. Enter a new code from your authenticator app (each code works once)."),
      this.codeForm("newcodes", "Get new codes"),
    ];
  }

  /** Why purchases wait and until when (SPEC 8.2), or null. `recovered`: the setup's short
   * form after a recovery code (said with or without a hold). */
  private holdNotice(recovered = false): Child {
    const until = holdUntil(this.state);
    const h = this.host.h;
    const times = until && holdTimes(until);
    const when = until && times ? [h("time", { datetime: until.toISOString() }, times.local), times.utc ? [" ", h("span", { class: "nowrap" }, "(" + times.utc + ").")] : "."] : null;
    if (recovered) {
      return h("p", { class: "notice compact", id: "hold-notice" }, "You used a recovery code: 2FA is off.", when ? [" Purchases are on hold until ", when] : null);
    }
    if (!when) return null;
    return h(
      "div",
      { class: "notice", id: "hold-notice" },
      h("p", null, "Purchases are on hold until ", when),
      h(
        "p",
        { class: "muted" },
        this.recovered
          ? "You turned 2FA off with a recovery code. The wait protects you if someone else has your codes."
          : "2FA was reset recently (with a recovery code or by support). The wait protects you if someone else has your codes.",
      ),
    );
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
      this.host.heading(this.recovered ? "Set up 2FA again" : "Set up two-factor authentication"),
      // After a recovery code: what happened and until when purchases wait, in place of why.
      this.recovered ? this.holdNotice(true) : h("p", null, SETUP_REQUIRED),
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
    } else if (f.status === 403 && f.message.indexOf(HOLD_PREFIX) === 0) {
      // A hold this page did not know of: the session says until when; the server's words too.
      await this.reload();
      if (this.host.current() === "review") this.host.refresh(f.message);
    } else if (f.status === 400) {
      this.orderIssue = { part: orderIssuePart(f.message), message: f.message };
      this.host.refresh(this.orderIssue.part ? "" : f.message);
    } else {
      this.host.refresh(f.status === 503 && f.message ? f.message : this.host.failureText(f));
    }
  }

  /** The review's purchase part: the unavailable notice, or the way to the 2FA step it still
   * needs, or Buy now (only when the session may buy; shown refused during a purchase hold, with
   * why and until when), the recovery codes left when few, the sandbox KYC control. `link` is the
   * copy-link part, primary when nothing is bought. */
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
    const step = checkoutStep(access);
    const held = !!holdUntil(state);
    out.push(this.holdNotice());
    if (step === "twofactor" || step === "setup") {
      // Back from the 2FA step: the way to it again.
      out.push(h("p", { class: "notice" }, step === "setup" ? SETUP_REQUIRED : VERIFY_REQUIRED));
      out.push(this.host.form("review", () => this.host.go(step), [], step === "setup" ? "Set up 2FA" : "Enter 2FA code"));
    } else if (held) {
      out.push(this.host.form("review", () => undefined, [], "Buy now", true, "hold-notice"));
    } else {
      out.push(this.host.form("review", () => void this.buy(), [], mayBuy(access) ? "Buy now" : null));
    }
    const few = fewCodesLeft(state);
    if (few !== null) {
      out.push(
        h(
          "div",
          { class: "notice", id: "codes-left" },
          h("p", null, few === 0 ? "You have no recovery codes left." : "You have " + few + " recovery code" + (few === 1 ? "" : "s") + " left."),
          h("button", { type: "button", class: "secondary", onclick: () => this.host.go("newcodes") }, "Get new recovery codes"),
        ),
      );
    }
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
