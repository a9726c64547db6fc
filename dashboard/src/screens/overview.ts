// Overview: the environment, whether the widget is approved, and the go-live checklist (an
// origin registered, a sandbox order placed, a webhook endpoint that answered a test), each
// item linking to the page where it is done.

import type { Overview } from "../api";
import { environmentName } from "../format";
import { pageHash, type PageName } from "../router";
import { badge, load, type Ctx } from "../ui";

export function overview(ctx: Ctx, body: HTMLElement): void {
  void load(ctx, body, () => ctx.api.overview(), (o: Overview) => {
    const h = ctx.h;
    const production = o.environment === "production";
    const items: [boolean, string, string, PageName, string][] = [
      [o.checklist.originRegistered, "An allowed origin is registered", "Add the origin of the site that embeds the widget.", "widget", "Widget settings"],
      [o.checklist.sandboxOrderPlaced, "A sandbox order was placed", "Buy through your widget in sandbox once.", "orders", "Orders"],
      [o.checklist.webhookAnswered, "A webhook endpoint answered a test", "Add an endpoint and send it a test event.", "webhooks", "Webhooks"],
    ];
    const done = items.filter((i) => i[0]).length;
    body.appendChild(
      h(
        "dl",
        { class: "summary" },
        h("dt", null, "Environment"),
        h("dd", null, badge(h, environmentName(o.environment), production ? "bad" : "info"), " ", production ? "Real money moves." : "Test mode: no real money moves."),
        h("dt", null, "Widget"),
        h("dd", null, o.widgetApproved ? badge(h, "Approved", "good") : badge(h, "Not approved yet", "warn"), " ", o.widgetApproved ? "The widget takes purchases." : production ? "The operator approves the widget before it takes purchases." : "Sandbox widgets work without approval."),
      ),
    );
    body.appendChild(h("h2", { id: "checklist-title" }, "Go-live checklist"));
    body.appendChild(h("p", { class: "muted" }, done + " of " + items.length + " done."));
    body.appendChild(
      h(
        "ul",
        { class: "checklist", "aria-labelledby": "checklist-title" },
        items.map(([ok, title, how, page, link]) =>
          h(
            "li",
            { class: ok ? "done" : "todo" },
            h("span", { class: "tick", "aria-hidden": "true" }, ok ? "\u2713" : "\u2022"),
            h(
              "div",
              null,
              h("p", { class: "item" }, title, " ", badge(h, ok ? "Done" : "To do", ok ? "good" : "warn")),
              ok ? null : h("p", { class: "muted" }, how, " ", h("a", { href: pageHash(page) }, "Go to " + link)),
            ),
          ),
        ),
      ),
    );
  });
}
