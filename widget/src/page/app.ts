// The widget page (SPEC 6.3): reads the options from its query, loads the partner's public
// config, asks the server to check the options, and walks the person through home, coin, amount
// and receive address, then the checkout (checkout.ts: sign-in, the 2FA step, review, order,
// confirmation). Every option rule is the server's (`POST /v1/widget/check`) and every purchase
// rule the widget session's; the page shows what they answer.

import { check, getConfig, type Config, type Failure, type Fetch, type Issue } from "./api";
import { Checkout } from "./checkout";
import { append, builder, clear, type Child } from "./dom";
import {
  CURRENCIES,
  initialSelection,
  issuesAt,
  makePlan,
  nextStep,
  previousStep,
  summaryUrl,
  type Part,
  type Plan,
  type Selection,
  type Step,
} from "./flow";
import { Messenger, type PageWindow, type ScreenName } from "./messenger";
import { originAllowed } from "./origin";
import { canonicalUrl, parseQuery, type Options } from "./query";

/** The core's defaults (core/src/widget/config.rs), shown when the options give none. */
export const DEFAULT_CLIENT_NAME = "Rampart Widget";
export const DEFAULT_HOME_SCREEN_MESSAGE = "Buy crypto with your card or bank transfer in minutes.";

export const NOT_APPROVED_MESSAGE = "This widget is not approved for production yet.";

/** What the page runs against: the browser, or a test's fakes. */
export interface Env {
  window: PageWindow & { ResizeObserver?: unknown };
  document: Document;
  location: { href: string; origin: string; pathname: string; search: string };
  fetch: Fetch;
  clipboard?: { writeText(text: string): Promise<void> };
  /** Timers (the wait after a throttled 2FA attempt). */
  setTimeout?: (fn: () => void, ms: number) => unknown;
  /** Offers a text file for download (the recovery codes); absent where the browser cannot. */
  saveFile?: (name: string, text: string) => void;
}

type Screen =
  | { name: "home" }
  | { name: Step }
  | { name: "problem"; report: ScreenName | null; title: string; body: Child[]; issues?: Issue[]; retry?: () => void; alert?: boolean };

export class App {
  private readonly env: Env;
  private readonly h: ReturnType<typeof builder>;
  private readonly messenger: Messenger;
  private readonly root: HTMLElement;
  private readonly main: HTMLElement;
  private readonly status: HTMLElement;
  private readonly bar: HTMLElement;
  private options: Options = {};
  private config: Config | null = null;
  private plan: Plan | null = null;
  private selection: Selection = { coin: "", currency: "usd", amount: "5", addresses: {} };
  private screen: Screen = { name: "home" };
  /** Issues shown next to a field, by path, from the last check of that field. */
  private fieldIssues: Issue[] = [];
  /** An async failure shown on the current step (role="alert"). */
  private stepFailure = "";
  private busy = false;
  private loading = true;
  private reported: ScreenName | null = null;
  /** After an `error` envelope: nothing more is posted. */
  private silenced = false;
  /** Embedded by a page that may not embed it: the explanation stays, nothing else runs. */
  private halted = false;
  /** Elements of the current screen that focus moves to. */
  private refs: { h1?: HTMLElement; invalid?: HTMLElement; field?: HTMLElement; primary?: HTMLElement; link?: HTMLInputElement } = {};
  private readonly checkout: Checkout;

  constructor(env: Env) {
    this.env = env;
    const doc = env.document;
    this.h = builder(doc);
    // Listen for the loader's hello at once: before the page's load event.
    this.messenger = new Messenger(env.window, () => this.connect());
    const h = this.h;
    this.bar = h("header", { class: "bar" });
    this.main = h("main", { class: "screen", id: "main" });
    this.status = h("div", { class: "visually-hidden", role: "status", "aria-live": "polite" });
    this.root = doc.getElementById("app") || doc.body.appendChild(h("div", { id: "app" }));
    this.root.setAttribute("class", "app");
    clear(this.root);
    this.root.appendChild(this.bar);
    this.root.appendChild(this.main);
    this.root.appendChild(this.status);
    this.checkout = new Checkout({
      h,
      fetch: env.fetch,
      clipboard: env.clipboard,
      setTimeout: env.setTimeout,
      publicKey: () => this.options.publicKey as string,
      origin: () => this.messenger.origin,
      clientName: () => this.clientName(),
      config: () => this.config as Config,
      plan: () => this.plan as Plan,
      selection: () => this.selection,
      current: () => this.screen.name,
      heading: (text) => this.heading(text),
      form: (step, onSubmit, children, primary, disabled, why) => this.form(step, onSubmit, children, primary, disabled, why),
      field: (id, label, value, onInput, errors, attrs, focus) => this.textField(id, label, value, onInput, errors, attrs, focus),
      checkbox: (id, label, checked, onChange, errors) => this.checkbox(id, label, checked, onChange, errors),
      primary: () => this.refs.primary,
      saveFile: env.saveFile,
      go: (step) => this.go(step),
      refresh: (alert, passive) => this.refresh(alert, passive),
      busy: () => this.busy,
      working: (label, task, button) => this.working(label, task, button),
      say: (text) => this.say(text),
      failureText: (failure) => this.failureText(failure),
      ordered: (order) => {
        if (!this.silenced) this.messenger.order(order.orderId, order.status);
      },
    });
    const Observer = env.window.ResizeObserver as (new (fn: () => void) => { observe(el: Element): void }) | undefined;
    if (typeof Observer === "function") new Observer(() => this.measure()).observe(this.root);
  }

  /** Reads the query and loads. */
  start(): void {
    try {
      this.options = parseQuery(this.env.location.search);
    } catch {
      this.options = {};
      this.show(this.problem(null, "This widget address cannot be read", ["A parameter in the page address is not valid UTF-8 text, so the options cannot be read. The site that links here must percent-encode its parameters as UTF-8."]));
      return;
    }
    if (this.options.darkTheme === true) this.env.document.documentElement.setAttribute("data-theme", "dark");
    this.env.document.title = this.clientName() + ": buy crypto";
    this.show({ name: "home" });
    if (typeof this.options.publicKey !== "string" || !this.options.publicKey) {
      this.loading = false;
      this.show(this.problem(null, "This widget has no key", [
        this.field("publicKey"),
        ": the page address has none. The site that links here must give its publishable key (pk_sandbox_... or pk_production_...); the legacy apiKey alone cannot load the widget.",
      ]));
      return;
    }
    void this.loadConfig();
  }

  private clientName(): string {
    const name = this.options.clientName;
    return typeof name === "string" && name.trim() ? name : this.config ? this.config.partnerName : DEFAULT_CLIENT_NAME;
  }

  private root_(): string {
    return this.env.location.origin + this.env.location.pathname;
  }

  // ---- loading -------------------------------------------------------------------------

  private async loadConfig(): Promise<void> {
    this.loading = true;
    this.show({ name: "home" });
    const answer = await getConfig(this.env.fetch, this.options.publicKey as string);
    if (!answer.ok) {
      this.loading = false;
      if (answer.failure.kind === "not_found") {
        this.show(this.problem(null, "Unknown widget key", [
          this.field("publicKey"),
          ": " + (answer.failure.message || "Partner not found") + ". No partner on this server has the publishable key in this page's address. The site that embedded the widget must use its own key, for this environment.",
        ]));
      } else {
        this.show(this.failed(answer.failure, "Could not load the widget", () => void this.loadConfig()));
      }
      return;
    }
    this.config = answer.value;
    this.env.document.title = this.clientName() + ": buy crypto";
    this.connect();
    if (this.halted) return;
    if (!this.config.approved) {
      this.loading = false;
      this.show(this.problem("not_approved", "Not available yet", [
        "This widget is for production and the operator has not approved it yet. No purchase can be made until it is approved; the site owner can ask the operator to approve the widget for this partner.",
      ]));
      return;
    }
    await this.checkOptions();
  }

  private async checkOptions(): Promise<void> {
    const config = this.config as Config;
    this.loading = true;
    this.show({ name: "home" });
    const answer = await check(this.env.fetch, this.options);
    this.loading = false;
    if (!answer.ok) {
      this.show(this.failed(answer.failure, "Could not check the widget options", () => void this.checkOptions()));
      return;
    }
    const plan = makePlan(this.options, config, answer.value);
    this.plan = plan;
    this.selection = initialSelection(this.options, plan);
    this.fieldIssues = plan.fieldIssues;
    if (plan.fatal.length || !plan.choices.length) {
      this.show(this.problem("options_invalid", "The widget is set up wrongly", [
        "The site that embedded the widget gave options it cannot use. The site owner must fix them:",
      ], plan.fatal.concat(plan.warnings)));
      return;
    }
    this.show({ name: plan.first });
  }

  // ---- the conversation with the loader ----------------------------------------------------

  /** Runs when the hello arrives and when the config arrives: decides once both are in. */
  private connect(): void {
    const config = this.config;
    if (!config || this.messenger.link !== "waiting") return;
    const link = this.messenger.connect((origin) => originAllowed(origin, config.widgetOrigins, config.environment));
    if (link === "refused") {
      this.loading = false;
      this.show(this.problem(null, "This site may not embed the widget", [
        "The page showing this widget is not registered for this partner, so the widget does not work here. The site owner can register the page's origin (scheme, host and port) in ",
        this.field("widgetOrigins"),
        ".",
      ]));
      this.halted = true;
      return;
    }
    if (link !== "connected") return;
    if (!config.approved) {
      this.messenger.error("not_approved", NOT_APPROVED_MESSAGE);
      this.silenced = true;
      return;
    }
    this.messenger.ready(canonicalUrl(this.root_(), this.options, config.coins.map((c) => c.symbol)));
    this.reported = null;
    this.report();
  }

  private report(): void {
    if (this.silenced) return;
    const s = this.screen;
    const name: ScreenName | null = s.name === "problem" ? s.report : s.name === "home" ? "home" : this.checkout.screenName(s.name);
    if (name && name !== this.reported) {
      this.reported = name;
      this.messenger.screen(name);
    }
    this.measure();
  }

  private measure(): void {
    if (!this.silenced) this.messenger.resize(this.root.offsetHeight);
  }

  // ---- screens --------------------------------------------------------------------------

  /** Renders `screen`. With `focus` (after the person acted): focus moves to the first field
   * in error, else to the heading of a new screen, else to the primary button. */
  private show(screen: Screen, focus = false): void {
    if (this.halted) return;
    const from = this.screen.name;
    const changed = screen.name !== from;
    this.screen = screen;
    this.refs = {};
    if (changed) this.checkout.arrive(from, screen.name);
    this.renderBar();
    clear(this.main);
    append(this.env.document, this.main, this.content(screen));
    if (focus) {
      const target = this.refs.invalid || (changed ? this.refs.h1 : this.refs.field || this.refs.primary || this.refs.h1);
      if (target) target.focus();
    }
    this.report();
  }

  private go(screen: Step | "home"): void {
    this.stepFailure = "";
    this.show({ name: screen }, true);
  }

  /** The current step again, with `alert` (role="alert") above its buttons ("" for none). */
  private refresh(alert = "", passive = false): void {
    if (this.screen.name === "problem") return;
    this.stepFailure = alert;
    // After an answer the person did not ask for just now (`passive`), focus on the heading stays
    // there; otherwise it goes to the field in error, the preferred field or the primary button.
    const onHeading = passive && !!this.refs.h1 && this.env.document.activeElement === this.refs.h1;
    this.show({ name: this.screen.name }, !onHeading);
    if (onHeading && this.refs.h1) this.refs.h1.focus();
  }

  private say(text: string): void {
    this.status.textContent = text;
  }

  /** Runs a request from the current step: `button` (the primary by default) says `label` and
   * refuses clicks until the answer is in; the form stays, so focus stays in it. */
  private async working<T>(label: string, task: () => Promise<T>, button: HTMLElement | undefined = this.refs.primary): Promise<T> {
    this.busy = true;
    this.stepFailure = "";
    if (button) {
      button.setAttribute("aria-disabled", "true");
      button.textContent = label;
    }
    this.status.textContent = label;
    try {
      return await task();
    } finally {
      this.busy = false;
      this.status.textContent = "";
    }
  }

  private renderBar(): void {
    const h = this.h;
    clear(this.bar);
    const logo = this.options.showRampartLogo === true;
    this.bar.appendChild(
      logo
        ? h("span", { class: "logo" }, h("span", { class: "logo-mark", "aria-hidden": "true" }), "Rampart")
        : h("span", { class: "brand" }, "Buy Crypto"),
    );
    if (this.config && this.config.environment === "sandbox") {
      this.bar.appendChild(h("span", { class: "badge", title: "Sandbox: test mode, no real money moves" }, "Sandbox"));
      // The sandbox's stand-in for the sign-in email: the only place the code is shown.
      const code = this.checkout.banner();
      if (code) this.bar.appendChild(h("p", { class: "sandbox-code", role: "status" }, "Sandbox sign-in code: ", h("code", null, code)));
    }
  }

  private content(screen: Screen): Child[] {
    switch (screen.name) {
      case "home":
        return this.home();
      case "coin":
        return this.coinScreen();
      case "amount":
        return this.amountScreen();
      case "address":
        return this.addressScreen();
      case "review":
        return this.reviewScreen();
      case "signin":
        return this.checkout.signInScreen();
      case "twofactor":
        return this.checkout.twoFactorScreen();
      case "setup":
        return this.checkout.setupScreen();
      case "recover":
        return this.checkout.recoverScreen();
      case "codes":
        return this.checkout.codesScreen();
      case "newcodes":
        return this.checkout.newCodesScreen();
      case "confirmation":
        return this.checkout.confirmationScreen();
      default:
        return this.problemScreen(screen);
    }
  }

  private heading(text: string): HTMLElement {
    return (this.refs.h1 = this.h("h1", { tabindex: "-1" }, text));
  }

  private field(path: string): HTMLElement {
    return this.h("code", { class: "path" }, path);
  }

  private issue(issue: Issue): HTMLElement {
    const h = this.h;
    return h(
      "li",
      null,
      this.field(issue.path || "options"),
      ": " + issue.message,
      issue.value ? h("span", { class: "value" }, " (given: ", h("code", null, issue.value), ")") : null,
      issue.suggestion ? " Did you mean " : null,
      issue.suggestion ? h("code", null, issue.suggestion) : null,
      issue.suggestion ? "?" : null,
    );
  }

  private home(): Child[] {
    const h = this.h;
    const message = typeof this.options.homeScreenMessage === "string" && this.options.homeScreenMessage ? this.options.homeScreenMessage : DEFAULT_HOME_SCREEN_MESSAGE;
    const out: Child[] = [this.heading(this.clientName()), h("p", { class: "lead" }, message)];
    if (this.loading) {
      out.push(h("p", { class: "loading", role: "status", "aria-busy": "true" }, h("span", { class: "spinner", "aria-hidden": "true" }), "Loading…"));
    } else if (this.plan) {
      out.push(
        h("p", null, "Choose a coin and an amount, and where you want to receive it."),
        h("div", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: () => this.go(nextStep(this.plan as Plan, this.selection, "home", this.checkout.access())) }, "Start")),
      );
    }
    return out;
  }

  /** The actions row: Back (when there is somewhere to go back to) and the primary button. */
  private actions(step: Step, primary: HTMLElement | null): HTMLElement {
    const h = this.h;
    const back = previousStep(this.plan as Plan, this.selection, step);
    if (primary) this.refs.primary = primary;
    return h("div", { class: "actions" }, back ? h("button", { type: "button", class: "secondary", onclick: () => this.go(back) }, "Back") : null, primary);
  }

  private failureNode(): Child {
    return this.stepFailure ? this.h("p", { class: "error", role: "alert" }, this.stepFailure) : null;
  }

  /** A step's form: its fields, the step's alert, then Back and the primary submit (`primary`
   * its text; none when null; `disabled`: shown aria-disabled and refusing submits; with `why`,
   * the id of the text saying why, it is shown off rather than busy). */
  private form(step: Step, onSubmit: () => void, children: Child[], primary: string | null = "Continue", disabled = false, why?: string): HTMLElement {
    const h = this.h;
    return h(
      "form",
      {
        novalidate: true,
        onsubmit: (event: Event) => {
          event.preventDefault();
          if (!this.busy && !disabled && primary) onSubmit();
        },
      },
      children,
      this.failureNode(),
      this.actions(step, primary ? h("button", { type: "submit", class: disabled && why ? "primary off" : "primary", "aria-disabled": disabled ? "true" : null, "aria-describedby": why || null }, primary) : null),
    );
  }

  private coinScreen(): Child[] {
    const h = this.h;
    const plan = this.plan as Plan;
    const list = plan.choices.map((coin) => {
      const id = "coin-" + coin.symbol;
      return h(
        "li",
        null,
        h("input", {
          type: "radio",
          name: "coin",
          id,
          value: coin.symbol,
          checked: coin.symbol === this.selection.coin,
          onchange: () => {
            this.selection.coin = coin.symbol;
          },
        }),
        h("label", { for: id }, h("span", { class: "coin-name" }, coin.name), h("span", { class: "coin-meta" }, coin.symbol.toUpperCase() + (coin.chain ? " · " + coin.chain : ""))),
      );
    });
    return [
      this.heading("Choose a coin"),
      this.form(
        "coin",
        () => this.go(nextStep(plan, this.selection, "coin", this.checkout.access())),
        [h("fieldset", null, h("legend", { class: "visually-hidden" }, "Coin"), h("ul", { class: "coins" }, list))],
      ),
    ];
  }

  /** An input with its label and, when the last check found problems, the linked errors. */
  private input(id: string, path: string, label: Child[], value: string, onInput: (value: string) => void, extra: { [name: string]: string } = {}): Child[] {
    const h = this.h;
    const issues = issuesAt(this.fieldIssues, path);
    const errorId = id + "-error";
    const field = h("input", {
        id,
        name: path,
        type: "text",
        value,
        autocomplete: "off",
        "aria-invalid": issues.length ? "true" : null,
        "aria-describedby": issues.length ? errorId : null,
        oninput: (event: Event) => onInput((event.target as HTMLInputElement).value),
        ...extra,
      });
    if (issues.length && !this.refs.invalid) this.refs.invalid = field;
    return [
      h("label", { for: id }, label),
      field,
      issues.length ? h("ul", { class: "error", id: errorId }, issues.map((issue) => this.issue(issue))) : null,
    ];
  }

  /** A checkout input: its label, and the server's messages (or the page's own) linked. With
   * `focus`, focus goes to it when the screen is shown again. */
  private textField(id: string, label: string, value: string, onInput: (value: string) => void, errors: string[], attrs: { [name: string]: string }, focus = false): Child[] {
    const h = this.h;
    const errorId = id + "-error";
    const field = h("input", {
      id,
      name: id,
      type: "text",
      value,
      autocomplete: "off",
      "aria-invalid": errors.length ? "true" : null,
      "aria-describedby": errors.length ? errorId : null,
      oninput: (event: Event) => onInput((event.target as HTMLInputElement).value),
      ...attrs,
    });
    if (errors.length && !this.refs.invalid) this.refs.invalid = field;
    if (focus && !this.refs.field) this.refs.field = field;
    return [
      h("label", { for: id }, label),
      field,
      errors.length ? h("ul", { class: "error", id: errorId }, errors.map((text) => h("li", null, text))) : null,
    ];
  }

  /** A checkbox, its label beside it, and its errors linked (focus goes to it when in error). */
  private checkbox(id: string, label: string, checked: boolean, onChange: (checked: boolean) => void, errors: string[]): Child[] {
    const h = this.h;
    const errorId = id + "-error";
    const box = h("input", {
      id,
      name: id,
      type: "checkbox",
      checked,
      "aria-invalid": errors.length ? "true" : null,
      "aria-describedby": errors.length ? errorId : null,
      onchange: (event: Event) => onChange((event.target as HTMLInputElement).checked),
    });
    if (errors.length && !this.refs.invalid) this.refs.invalid = box;
    return [
      h("div", { class: "check" }, box, h("label", { for: id }, label)),
      errors.length ? h("ul", { class: "error", id: errorId }, errors.map((text) => h("li", null, text))) : null,
    ];
  }

  private amountScreen(): Child[] {
    const h = this.h;
    const plan = this.plan as Plan;
    const sel = this.selection;
    const currency = plan.locked.currency
      ? null
      : h(
          "div",
          { class: "field" },
          h("label", { for: "currency" }, "Currency"),
          h(
            "select",
            { id: "currency", name: "currencies", onchange: (event: Event) => (sel.currency = (event.target as HTMLSelectElement).value) },
            CURRENCIES.map((code) => h("option", { value: code, selected: code === sel.currency }, code.toUpperCase())),
          ),
        );
    return [
      this.heading("How much do you want to spend?"),
      this.form(
        "amount",
        () => void this.submitAmount(),
        [
          h("div", { class: "row" },
            h("div", { class: "field grow" }, this.input("amount", "amount", ["Amount", plan.locked.currency ? " (" + sel.currency.toUpperCase() + ")" : null], sel.amount, (v) => (sel.amount = v), { inputmode: "decimal" })),
            currency,
          ),
          this.coinLine(),
        ],
      ),
    ];
  }

  private coinName(symbol: string): string {
    const coin = (this.config as Config).coins.filter((c) => c.symbol === symbol)[0];
    return coin ? coin.name : symbol.toUpperCase();
  }

  private coinLine(): Child {
    return this.selection.coin ? this.h("p", { class: "muted" }, "Coin: " + this.coinName(this.selection.coin) + " (" + this.selection.coin.toUpperCase() + ")") : null;
  }

  private addressScreen(): Child[] {
    const h = this.h;
    const sel = this.selection;
    const coin = (this.config as Config).coins.filter((c) => c.symbol === sel.coin)[0];
    const name = coin ? coin.name : sel.coin.toUpperCase();
    return [
      this.heading("Where should we send your " + name + "?"),
      this.form(
        "address",
        () => void this.submitAddress(),
        [
          h("div", { class: "field" },
            this.input(
              "address",
              "receiveAddress." + sel.coin,
              ["Your " + name + " (" + sel.coin.toUpperCase() + ") address" + (coin ? " on " + coin.chain : "")],
              sel.addresses[sel.coin] || "",
              (v) => (sel.addresses[sel.coin] = v),
              { spellcheck: "false", autocapitalize: "off", class: "mono" },
            ),
          ),
          h("p", { class: "muted" }, "Amount: " + sel.amount + " " + sel.currency.toUpperCase()),
        ],
      ),
    ];
  }

  /** The review: the choices (each with "Change" when editable; an order's 400 at the part it
   * names), then the checkout's controls (Buy now, or why not), and the canonical URL of the
   * choices with "Copy link". */
  private reviewScreen(): Child[] {
    const h = this.h;
    const plan = this.plan as Plan;
    const sel = this.selection;
    const url = summaryUrl(this.root_(), this.options, sel, this.config as Config);
    const change = (step: Part, what: string): Child => {
      const issue = this.checkout.issueAt(step);
      const locked = plan.mode === "oneScreenCheckout" || (step === "coin" && (plan.locked.coin || plan.choices.length < 2)) || (step === "amount" && plan.locked.amount) || (step === "address" && plan.locked.address && plan.addressCoin === sel.coin);
      const button = locked ? null : h("button", { type: "button", class: "link", "aria-label": "Change " + what, "aria-describedby": issue ? "order-error" : null, onclick: () => this.go(step) }, "Change");
      if (issue && button && !this.refs.invalid) this.refs.invalid = button;
      return [button, issue ? h("p", { class: "error", role: "alert", id: "order-error" }, issue) : null];
    };
    const row = (term: string, value: Child, edit: Child): Child[] => [h("dt", null, term), h("dd", null, value, edit)];
    const link = (primary: boolean): Child => {
      const copy = h("button", { type: "button", class: primary ? "primary" : "secondary", onclick: () => this.copy(url) }, "Copy link");
      return [
        h("div", { class: "field" },
          h("label", { for: "link" }, "Link to this purchase"),
          (this.refs.link = h("input", { id: "link", type: "text", readonly: true, value: url, class: "mono", "aria-describedby": "link-hint" }) as HTMLInputElement),
          h("p", { id: "link-hint", class: "muted" }, "Opens the widget on these choices."),
        ),
        primary ? this.actions("review", copy) : h("div", { class: "more" }, copy),
      ];
    };
    return [
      this.heading("Your purchase"),
      plan.mode === "oneScreenCheckout" ? h("p", { class: "muted" }, "Set by " + this.clientName() + ".") : null,
      h(
        "dl",
        { class: "summary" },
        row("Coin", this.coinName(sel.coin) + " (" + sel.coin.toUpperCase() + ")", change("coin", "the coin")),
        row("Amount", sel.amount + " " + sel.currency.toUpperCase(), change("amount", "the amount")),
        row("Receive address", h("span", { class: "mono" }, sel.addresses[sel.coin] || ""), change("address", "the receive address")),
      ),
      this.checkout.reviewControls(link),
    ];
  }

  private problemScreen(screen: Extract<Screen, { name: "problem" }>): Child[] {
    const h = this.h;
    return [
      this.heading(screen.title),
      h("div", { role: screen.alert ? "alert" : null }, h("p", null, screen.body)),
      screen.issues && screen.issues.length ? h("ul", { class: "issues" }, screen.issues.map((issue) => this.issue(issue))) : null,
      screen.retry ? h("div", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: screen.retry }, "Try again")) : null,
    ];
  }

  private problem(report: ScreenName | null, title: string, body: Child[], issues?: Issue[]): Screen {
    return { name: "problem", report, title, body, issues };
  }

  /** The explanation of a failed request, with a retry control. */
  private failed(failure: Failure, title: string, retry: () => void): Screen {
    return { name: "problem", report: "retry", title, body: [this.failureText(failure)], retry, alert: true };
  }

  private failureText(failure: Failure): string {
    switch (failure.kind) {
      case "rate_limited":
        return "Too many requests from this network. Wait " + failure.seconds + " second" + (failure.seconds === 1 ? "" : "s") + ", then try again.";
      case "network":
        return "The widget could not reach its server. Check your connection, then try again.";
      default:
        return "The server answered: " + failure.message;
    }
  }

  // ---- the steps' checks ------------------------------------------------------------------

  /** Asks the server about a part; shows its issues next to the field or moves on. */
  private async submitPart(step: Part, options: Options, path: string): Promise<void> {
    const answer = await this.working("Checking…", () => check(this.env.fetch, { publicKey: this.options.publicKey, ...options }));
    if (!answer.ok) {
      this.stepFailure = this.failureText(answer.failure);
      this.show({ name: step }, true);
      return;
    }
    const issues = answer.value.errors.filter((issue) => issue.path === path);
    this.fieldIssues = this.fieldIssues.filter((issue) => issue.path !== path).concat(issues);
    if (issues.length) {
      this.show({ name: step }, true);
      return;
    }
    this.go(nextStep(this.plan as Plan, this.selection, step, this.checkout.access()));
  }

  private submitAmount(): Promise<void> {
    const sel = this.selection;
    return this.submitPart("amount", { amount: sel.amount, currencies: sel.currency }, "amount");
  }

  private submitAddress(): Promise<void> {
    const sel = this.selection;
    return this.submitPart("address", { tokens: sel.coin, receiveAddress: { [sel.coin]: sel.addresses[sel.coin] || "" } }, "receiveAddress." + sel.coin);
  }

  private copy(url: string): void {
    const done = (text: string): void => {
      this.status.textContent = text;
    };
    const field = this.refs.link;
    const fallback = (): void => {
      if (field) {
        field.focus();
        field.select();
      }
      done("Select the link and copy it.");
    };
    const clipboard = this.env.clipboard;
    if (clipboard) clipboard.writeText(url).then(() => done("Link copied."), fallback);
    else fallback();
  }
}
