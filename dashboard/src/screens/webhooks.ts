// Webhooks (SPEC 10): the partner's endpoints, each with a test, a new signing secret (shown
// once), delete (after a confirm) and its delivery log (every attempt, with resend); and the
// form that adds an endpoint (its signing secret shown once).

import type { Attempt, Endpoint } from "../api";
import { fieldFor, formatTime } from "../format";
import { badge, busy, button, choices, clear, confirmAction, field, form, load, loading, Paging, secretBox, showFailure, table, time, type Ctx } from "../ui";

/** An attempt's outcome in words: the HTTP status the endpoint gave, or why none came. */
export function attemptResult(a: Attempt): { text: string; ok: boolean } {
  if (a.status !== null && a.status >= 200 && a.status <= 299) return { text: "HTTP " + a.status, ok: true };
  if (a.status !== null) return { text: "HTTP " + a.status + (a.error ? ": " + a.error : ""), ok: false };
  return { text: a.error || "No answer", ok: false };
}

export function webhooks(ctx: Ctx, body: HTMLElement): void {
  void load(ctx, body, () => ctx.api.webhooks(), (value) => draw(ctx, body, value.endpoints, value.events));
}

function draw(ctx: Ctx, body: HTMLElement, endpoints: Endpoint[], events: string[]): void {
  const h = ctx.h;
  const may = ctx.me.permissions.webhooks;
  const listTitle = h("h2", { id: "endpoints-title", tabindex: "-1" }, "Endpoints");
  const list = h("ul", { class: "cards", "aria-labelledby": "endpoints-title" });

  /** The cards by endpoint id: kept across renders, so an open log or a secret shown once stays. */
  const cards: { [id: string]: HTMLElement } = {};
  let made = 0;
  const render = (): void => {
    clear(list);
    if (!endpoints.length) list.appendChild(h("li", { class: "empty" }, "No endpoints yet." + (may ? " Add one below." : "")));
    for (const e of endpoints) list.appendChild(cards[e.id] || (cards[e.id] = card(e)));
  };

  /** One endpoint's card. */
  const card = (e: Endpoint): HTMLElement => {
    const id = "endpoint-" + made++;
    const note = h("div", { class: "card-note", role: "status" });
    const alert = h("div", { class: "form-error", role: "alert" });
    const secret = h("div", null);
    const log = h("div", { class: "log", id: id + "-log", hidden: true });
    const paging = new Paging();
    let logOpen = false;

    const fetchLog = async (): Promise<void> => {
      clear(log);
      log.appendChild(loading(h));
      const answer = await ctx.call(ctx.api.deliveries(e.id, paging.cursor));
      if (!answer) return;
      clear(log);
      if (!answer.ok) {
        const problem = h("div", { class: "problem", role: "alert" });
        log.appendChild(problem);
        showFailure(ctx, problem, answer, () => void fetchLog());
        return;
      }
      log.appendChild(
        table(h, {
          id: id + "-attempts",
          caption: "Delivery log of " + e.url + ", newest first" + paging.label(),
          head: may ? ["Time", "Event", "Attempt", "Result", "Latency", "Resend"] : ["Time", "Event", "Attempt", "Result", "Latency"],
          empty: "No deliveries yet.",
          rows: answer.value.attempts.map((a) => {
            const result = attemptResult(a);
            const cells = [
              time(h, formatTime(a.at)),
              h("code", null, a.event),
              String(a.attempt),
              badge(h, result.text, result.ok ? "good" : "bad"),
              a.latencyMs === null || a.latencyMs === undefined ? "\u2013" : a.latencyMs + " ms",
            ];
            if (may) cells.push(button(h, "Resend", (event) => void resend(event.currentTarget as HTMLElement, a), "secondary small", { "aria-label": "Resend " + a.event + " of " + formatTime(a.at).text }));
            return cells;
          }),
        }),
      );
      const pager = paging.buttons(h, answer.value.next, log, fetchLog, ["Newer attempts", "Older attempts"]);
      if (pager) log.appendChild(pager);
    };

    const resend = async (trigger: HTMLElement, a: Attempt): Promise<void> => {
      if (trigger.getAttribute("aria-disabled") === "true") return;
      clear(alert);
      const answer = await ctx.call(busy(trigger, "Resending\u2026", () => ctx.api.resend(a.messageId)));
      if (!answer) return;
      if (!answer.ok) {
        showFailure(ctx, alert, answer, () => void resend(trigger, a));
        return;
      }
      note.textContent = "Queued again: " + a.event + ". It shows in the log once delivered.";
      paging.reset();
      void fetchLog();
    };

    const toggle = button(h, "Show delivery log", () => {
      logOpen = !logOpen;
      toggle.setAttribute("aria-expanded", logOpen ? "true" : "false");
      toggle.textContent = logOpen ? "Hide delivery log" : "Show delivery log";
      if (logOpen) {
        log.removeAttribute("hidden");
        paging.reset();
        void fetchLog();
      } else {
        log.setAttribute("hidden", "");
        clear(log);
      }
    }, "secondary", { "aria-expanded": "false", "aria-controls": id + "-log" });

    const actions = h("div", { class: "card-actions" });
    if (may) {
      const test = button(h, "Send test", () => void sendTest(), "secondary", { "aria-label": "Send test to " + e.url });
      const sendTest = async (): Promise<void> => {
        if (test.getAttribute("aria-disabled") === "true") return;
        clear(alert);
        const answer = await ctx.call(busy(test, "Sending\u2026", () => ctx.api.testWebhook(e.id)));
        if (!answer) return;
        if (!answer.ok) {
          showFailure(ctx, alert, answer, () => void sendTest());
          return;
        }
        note.textContent = "Test event queued. It shows in the delivery log once delivered.";
        if (logOpen) {
          paging.reset();
          void fetchLog();
        }
      };
      actions.appendChild(test);
      actions.appendChild(
        confirmAction(ctx, {
          label: "New signing secret",
          accessibleLabel: "New signing secret for " + e.url,
          question: "Replace the signing secret? Messages are signed with both for 24 hours, then only with the new one.",
          confirm: "Replace secret",
          act: async (yes, reset) => {
            clear(alert);
            const answer = await ctx.call(busy(yes, "Replacing\u2026", () => ctx.api.rotateWebhookSecret(e.id)));
            if (!answer) return;
            if (!answer.ok) {
              showFailure(ctx, alert, answer);
              return;
            }
            clear(secret);
            secret.appendChild(secretBox(ctx, { id: id + "-secret", label: "New signing secret", value: answer.value.secret, what: "Signing secret", warning: "Put it on your server now: it will not be shown again, and the old one no longer signs." }));
            reset();
            const input = secret.querySelector("input");
            if (input) (input as HTMLInputElement).focus();
          },
        }),
      );
      actions.appendChild(
        confirmAction(ctx, {
          label: "Delete",
          accessibleLabel: "Delete " + e.url,
          question: "Delete this endpoint? Its deliveries stop.",
          confirm: "Delete endpoint",
          act: async (yes) => {
            clear(alert);
            const answer = await ctx.call(busy(yes, "Deleting\u2026", () => ctx.api.deleteWebhook(e.id)));
            if (!answer) return;
            if (!answer.ok) {
              showFailure(ctx, alert, answer);
              return;
            }
            endpoints.splice(endpoints.indexOf(e), 1);
            delete cards[e.id];
            render();
            ctx.say("Endpoint " + e.url + " deleted.");
            listTitle.focus();
          },
        }),
      );
    }
    actions.appendChild(toggle);

    return h(
      "li",
      { class: "card", id },
      h("h3", null, h("code", { class: "url" }, e.url)),
      h(
        "p",
        { class: "meta" },
        e.enabled ? badge(h, "Enabled", "good") : badge(h, "Disabled", "warn"),
        " Added ",
        time(h, formatTime(e.createdAt)),
      ),
      h("p", { class: "events" }, "Events: ", e.events.map((name, i) => [i ? ", " : "", h("code", null, name)])),
      actions,
      alert,
      note,
      secret,
      log,
    );
  };

  body.appendChild(h("p", { class: "muted" }, "Rampart signs each event it posts (Standard Webhooks) with the endpoint's secret. Check the signature before trusting an event."));
  body.appendChild(listTitle);
  body.appendChild(list);
  render();
  if (!may) {
    body.appendChild(h("p", { class: "muted" }, "Your role can see the endpoints and their logs but not change them."));
    return;
  }

  // ---- the add form -----------------------------------------------------------------------
  const url = field(h, { id: "webhook-url", label: "Endpoint URL", type: "url", hint: "An https:// address on your server: Rampart posts the events there.", attrs: { spellcheck: "false", autocapitalize: "none", inputmode: "url" } });
  const picked = choices(h, { id: "webhook-events", legend: "Events", type: "checkbox", options: events.map((name) => [name, name] as [string, string]), checked: events.slice() });
  const created = h("div", null);
  const f = form(h, {
    label: "Add an endpoint",
    children: [url.node, picked.node],
    submit: "Add endpoint",
    onSubmit: (submit) => void add(submit),
  });
  const add = async (submit: HTMLElement): Promise<void> => {
    url.setError(null);
    picked.setError(null);
    clear(f.alert);
    clear(created);
    const chosen = picked.values();
    if (!chosen.length) {
      picked.setError("Choose at least one event.");
      picked.inputs[0].focus();
      return;
    }
    const answer = await ctx.call(busy(submit, "Adding\u2026", () => ctx.api.addWebhook(url.value().trim(), chosen)));
    if (!answer) return;
    if (!answer.ok) {
      const name = answer.status === 400 ? fieldFor(answer, ["url", "events"]) : null;
      if (name === "url") {
        url.setError(answer.message);
        url.input.focus();
      } else if (name === "events") {
        picked.setError(answer.message);
        picked.inputs[0].focus();
      } else showFailure(ctx, f.alert, answer, () => void add(submit));
      return;
    }
    endpoints.push(answer.value.endpoint);
    render();
    url.input.value = "";
    created.appendChild(h("p", { role: "status" }, "Endpoint added: ", h("code", null, answer.value.endpoint.url)));
    created.appendChild(secretBox(ctx, { id: "new-webhook-secret", label: "Signing secret", value: answer.value.secret, what: "Signing secret", warning: "Put it on your server to check signatures: it will not be shown again." }));
    const input = created.querySelector("input");
    if (input) (input as HTMLInputElement).focus();
  };
  body.appendChild(h("h2", null, "Add an endpoint"));
  body.appendChild(f.node);
  body.appendChild(created);
}
