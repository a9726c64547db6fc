// The dashboard's shell (SPEC 11): the header (partner, environment, member, Sign out), the nav,
// the hash router and the screens. It asks `GET /v1/dashboard/me` first, and beside it the data
// of the page the hash names: a session shows that page, none shows the sign-in screen.
// `#invite=<token>` starts the invitation, after the token has been taken out of the address
// bar. A 401 from any signed-in call ends the session on this page too: the sign-in screen
// comes back with the reason.

import { createApi, FIRST_GET, type Api, type Fetch, type Me } from "./api";
import { environmentName, roleName } from "./format";
import { DEFAULT_PAGE, PAGES, pageHash, pageTitle, parseRoute, type PageName } from "./router";
import { auth, SESSION_ENDED, type AuthHost } from "./screens/auth";
import { audit } from "./screens/audit";
import { contacts } from "./screens/contacts";
import { keys } from "./screens/keys";
import { orders } from "./screens/orders";
import { overview } from "./screens/overview";
import { team } from "./screens/team";
import { webhooks } from "./screens/webhooks";
import { widget } from "./screens/widget";
import { badge, busy, button, clear, showFailure, type Ctx, type H } from "./ui";
import { builder } from "../../widget/src/page/dom";

/** What the app runs against: the browser, or a test's fakes. */
export interface Env {
  window: { addEventListener(type: "hashchange", listener: () => void): void };
  history: { replaceState(data: unknown, unused: string, url: string): void };
  document: Document;
  location: { hash: string; pathname: string; search: string };
  fetch: Fetch;
  clipboard?: { writeText(text: string): Promise<void> };
  save?: (name: string, text: string) => void;
}

type Build = (ctx: Ctx, body: HTMLElement) => void;

const SCREENS: { [P in PageName]: Build } = { overview, keys, widget, orders, contacts, webhooks, audit, team };

/** Read by no screen before sign-in; stands in for `me` there. */
const NOBODY: Me = {
  member: { id: "", email: "", role: "viewer" },
  partner: { id: "", name: "", environment: "sandbox" },
  permissions: { keys: false, widget: false, webhooks: false, team: false },
};

export { SESSION_ENDED };
export const SIGNED_OUT = "You signed out.";

export class App {
  private readonly env: Env;
  private readonly h: H;
  private readonly api: Api;
  private readonly header: HTMLElement;
  private readonly nav: HTMLElement;
  private readonly main: HTMLElement;
  private readonly status: HTMLElement;
  private me: Me | null = null;
  /** The page to show once signed in (the hash's). */
  private target: PageName = DEFAULT_PAGE;
  private current: PageName | null = null;
  /** Counts screens: a screen's late answers are dropped once another is shown. */
  private screenId = 0;
  private heading: HTMLElement | null = null;
  /** False until the first screen after the start's loading: that one keeps the browser's
   * initial focus (the top of the document); every later screen moves focus to its heading. */
  private settled = false;

  constructor(env: Env) {
    this.env = env;
    const doc = env.document;
    const h = (this.h = builder(doc));
    this.api = createApi(env.fetch);
    this.header = h("header", { class: "top" });
    this.nav = h("nav", { class: "pages", "aria-label": "Dashboard pages" });
    this.main = h("main", { id: "main", tabindex: "-1" });
    this.status = h("div", { class: "visually-hidden", role: "status", "aria-live": "polite" });
    const root = doc.getElementById("app") || doc.body.appendChild(h("div", { id: "app" }));
    clear(root);
    root.appendChild(
      h(
        "a",
        {
          class: "skip",
          href: "#main",
          // The hash is the router's: the skip link moves focus without changing it.
          onclick: (event: Event) => {
            event.preventDefault();
            this.main.focus();
          },
        },
        "Skip to content",
      ),
    );
    root.appendChild(this.header);
    root.appendChild(this.nav);
    root.appendChild(this.main);
    root.appendChild(this.status);
  }

  start(): void {
    this.env.window.addEventListener("hashchange", () => this.onHash());
    const route = parseRoute(this.env.location.hash);
    if (route.kind === "invite") {
      this.dropHash();
      auth(this.authHost()).invitation(route.token);
      return;
    }
    this.target = route.page;
    // The page's data is asked for beside `/me` (its answer is dropped if nobody is signed in).
    this.api.prefetch(FIRST_GET[route.page]);
    this.loadMe();
  }

  /** Takes the hash (an invitation's token) out of the address bar and the history entry. */
  private dropHash(): void {
    this.env.history.replaceState(null, "", this.env.location.pathname + this.env.location.search);
  }

  private onHash(): void {
    const hash = this.env.location.hash;
    const route = parseRoute(hash);
    if (route.kind === "invite") {
      this.dropHash();
      this.me = null;
      auth(this.authHost()).invitation(route.token);
      return;
    }
    // Only `#/page` hashes are routes (a stray `#main` or an empty hash is not a navigation).
    if (hash.indexOf("#/") !== 0) return;
    this.target = route.page;
    if (this.me && route.page !== this.current) this.showPage(route.page);
  }

  /** `GET me`: the page the hash names, or the sign-in screen. */
  private loadMe(): void {
    this.me = null;
    this.render("Rampart dashboard", null, (ctx, body) => {
      const h = this.h;
      const run = async (): Promise<void> => {
        clear(body);
        body.appendChild(h("p", { class: "loading", role: "status" }, h("span", { class: "spinner", "aria-hidden": "true" }), "Loading\u2026"));
        const answer = await ctx.call(this.api.me());
        // The page shown on success takes its prefetched answer at once; what is left is stale.
        if (answer && answer.ok) this.signedIn(answer.value.me);
        this.api.dropPrefetched();
        if (!answer || answer.ok) return;
        if (answer.status === 401) auth(this.authHost()).signIn(null);
        else {
          clear(body);
          const problem = h("div", { class: "problem", role: "alert" });
          body.appendChild(problem);
          showFailure(ctx, problem, answer, () => void run());
        }
      };
      void run();
    }, true);
  }

  private signedIn(me: Me): void {
    this.me = me;
    this.env.history.replaceState(null, "", this.env.location.pathname + this.env.location.search + pageHash(this.target));
    this.showPage(this.target);
  }

  private showPage(page: PageName): void {
    this.current = page;
    this.render(pageTitle(page), page, SCREENS[page]);
  }

  /** The session is gone (401): the sign-in screen, with why. */
  private ended(notice: string): void {
    this.me = null;
    this.current = null;
    this.api.forget();
    auth(this.authHost()).signIn(notice);
  }

  private authHost(): AuthHost {
    return {
      show: (title, build) => {
        this.me = null;
        this.current = null;
        this.render(title, null, build);
      },
      signedIn: (me) => this.signedIn(me),
      afterSetup: () => {
        this.target = DEFAULT_PAGE;
        this.loadMe();
      },
    };
  }

  /** A new screen: the header and nav for who is signed in, the heading, then `build`'s body.
   * Focus moves to the heading (not at the start: the browser begins at the top). `loading`:
   * the start's placeholder screen, which does not count as the first. */
  private render(title: string, page: PageName | null, build: Build, loading = false): void {
    const id = ++this.screenId;
    this.renderChrome(page);
    clear(this.main);
    const h = this.h;
    this.heading = h("h1", { tabindex: "-1", id: "page-title" }, title);
    const body = h("div", { class: "page page-" + (page || "auth") });
    this.main.appendChild(this.heading);
    this.main.appendChild(body);
    this.env.document.title = title + (this.me ? " \u2013 " + this.me.partner.name : "") + " \u2013 Rampart dashboard";
    build(this.ctx(id), body);
    if (this.settled) this.heading.focus();
    else if (!loading) this.settled = true;
  }

  private ctx(id: number): Ctx {
    const env = this.env;
    return {
      h: this.h,
      doc: env.document,
      api: this.api,
      me: this.me || NOBODY,
      alive: () => id === this.screenId,
      call: async (answer) => {
        const result = await answer;
        if (id !== this.screenId) return null;
        // Signed in, a 401 means the session is gone (idle, signed out elsewhere, server restart).
        if (!result.ok && result.status === 401 && this.me) {
          this.ended(SESSION_ENDED);
          return null;
        }
        return result;
      },
      say: (text) => this.say(text),
      copy: (text, what, select) => {
        const fallback = () => {
          if (select) {
            select.focus();
            select.select();
          }
          this.say("Copying was refused: the text is selected, press Ctrl+C (or Command+C) to copy it.");
        };
        if (env.clipboard) env.clipboard.writeText(text).then(() => this.say(what + " copied."), fallback);
        else fallback();
      },
      save: env.save,
      focusHeading: () => {
        if (this.heading) this.heading.focus();
      },
      reloadMe: () => {
        if (this.current) this.target = this.current;
        this.loadMe();
      },
    };
  }

  private say(text: string): void {
    // Emptied first, so the same words twice are announced twice.
    this.status.textContent = "";
    this.status.textContent = text;
  }

  private renderChrome(page: PageName | null): void {
    const h = this.h;
    const me = this.me;
    clear(this.header);
    clear(this.nav);
    if (!me) {
      this.header.appendChild(h("p", { class: "brand" }, h("span", { class: "mark", "aria-hidden": "true" }), "Rampart dashboard"));
      this.nav.setAttribute("hidden", "");
      return;
    }
    this.nav.removeAttribute("hidden");
    const env = me.partner.environment;
    const signOut = button(h, "Sign out", () => void this.signOut(signOut), "secondary small");
    this.header.appendChild(
      h(
        "div",
        { class: "partner" },
        h("p", { class: "brand" }, h("span", { class: "mark", "aria-hidden": "true" }), h("span", { class: "partner-name" }, me.partner.name)),
        badge(h, environmentName(env), env === "production" ? "bad" : "info"),
      ),
    );
    this.header.appendChild(
      h(
        "div",
        { class: "member" },
        h("p", null, h("span", { class: "visually-hidden" }, "Signed in as "), h("span", { class: "email" }, me.member.email), " ", h("span", { class: "role" }, "(" + roleName(me.member.role) + ")")),
        signOut,
      ),
    );
    // Team is the owner's page; every other page is readable by every role.
    const pages = PAGES.filter((p) => p.name !== "team" || me.permissions.team);
    this.nav.appendChild(
      h(
        "ul",
        null,
        pages.map((p) => h("li", null, h("a", { href: pageHash(p.name), "aria-current": p.name === page ? "page" : null }, p.title))),
      ),
    );
  }

  private async signOut(trigger: HTMLElement): Promise<void> {
    if (trigger.getAttribute("aria-disabled") === "true") return;
    const answer = await busy(trigger, "Signing out\u2026", () => this.api.signOut());
    if (answer.ok || answer.status === 401) {
      this.ended(SIGNED_OUT);
      return;
    }
    // Still signed in: the failure stays in view above the heading, with a way to try again.
    const old = this.main.querySelector(".sign-out-problem");
    if (old && old.parentNode) old.parentNode.removeChild(old);
    const problem = this.h("div", { class: "problem sign-out-problem", role: "alert" });
    this.main.insertBefore(problem, this.main.firstChild);
    showFailure(this.ctx(this.screenId), problem, answer, () => {
      if (problem.parentNode) problem.parentNode.removeChild(problem);
      void this.signOut(trigger);
    });
  }
}
