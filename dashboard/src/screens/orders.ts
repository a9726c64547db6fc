// Orders: filters (status, coin, dates, contact), a page of the matching orders newest first,
// "Next page" by the answer's cursor, and a CSV download of exactly the applied filters' rows.

import type { Order } from "../api";
import { cleanFilters, csvHref, FILTER_NAMES, fieldFor, formatTime, NO_FILTERS, type Filters } from "../format";
import { badge, button, clear, field, form, loading, Paging, showFailure, table, time, type Ctx, type Field } from "../ui";

export const STATUSES: [string, string][] = [
  ["", "Any status"],
  ["created", "Created"],
  ["completed", "Completed"],
  ["failed", "Failed"],
];

export function statusBadge(ctx: Ctx, status: string): HTMLElement {
  return badge(ctx.h, status, status === "completed" ? "good" : status === "failed" ? "bad" : "info");
}

export function orders(ctx: Ctx, body: HTMLElement): void {
  const h = ctx.h;
  let applied: Filters = NO_FILTERS;
  const paging = new Paging();

  const fields: { [K in keyof Filters]: Field } = {
    status: field(h, { id: "status", label: "Status", options: STATUSES }),
    coin: field(h, { id: "coin", label: "Coin", attrs: { spellcheck: "false", autocapitalize: "characters", placeholder: "BTC" } }),
    from: field(h, { id: "from", label: "From (UTC)", type: "date" }),
    to: field(h, { id: "to", label: "To (UTC, inclusive)", type: "date" }),
    contactId: field(h, { id: "contactId", label: "Contact id", attrs: { spellcheck: "false", autocapitalize: "none", class: "mono" } }),
  };
  const results = h("div", { class: "results", "aria-busy": "false" });
  const csv = h("a", { class: "button secondary", id: "orders-csv", download: "orders.csv" }, "Download CSV");
  const f = form(h, {
    label: "Filter orders",
    id: "order-filters",
    children: [h("div", { class: "filters" }, FILTER_NAMES.map((name) => fields[name].node))],
    submit: "Apply filters",
    extra: button(h, "Clear", () => {
      for (const name of FILTER_NAMES) fields[name].input.value = "";
      apply();
    }),
    onSubmit: () => apply(),
  });

  const apply = (): void => {
    const typed: Filters = { ...NO_FILTERS };
    for (const name of FILTER_NAMES) typed[name] = fields[name].value();
    applied = cleanFilters(typed);
    paging.reset();
    void fetchPage();
  };

  const fetchPage = async (): Promise<void> => {
    for (const name of FILTER_NAMES) fields[name].setError(null);
    clear(f.alert);
    csv.setAttribute("href", csvHref(applied));
    clear(results);
    results.setAttribute("aria-busy", "true");
    results.appendChild(loading(h));
    const answer = await ctx.call(ctx.api.orders(applied, paging.cursor));
    if (!answer) return;
    results.setAttribute("aria-busy", "false");
    clear(results);
    if (!answer.ok) {
      const name = answer.status === 400 ? fieldFor(answer, FILTER_NAMES) : null;
      if (name) {
        fields[name as keyof Filters].setError(answer.message);
        fields[name as keyof Filters].input.focus();
      } else showFailure(ctx, f.alert, answer, () => void fetchPage());
      return;
    }
    const list: Order[] = answer.value.orders;
    const next = answer.value.next;
    results.appendChild(
      table(h, {
        id: "orders-table",
        caption: "Orders, newest first" + paging.label(),
        head: ["Created", "Status", "Coin", "Amount", "Price", "Quantity", "Contact", "Order", "Address"],
        empty: "No orders match these filters.",
        rows: list.map((o) => [
          time(h, formatTime(o.createdAt)),
          statusBadge(ctx, o.status),
          o.coin,
          h("span", { class: "nowrap" }, o.amount + " " + o.currency.toUpperCase()),
          o.price,
          o.quantity,
          h("code", null, o.contactId),
          h("code", null, o.orderId),
          h("code", { class: "address" }, o.address),
        ]),
      }),
    );
    ctx.say(list.length ? list.length + (list.length === 1 ? " order" : " orders") + " shown." : "No orders match these filters.");
    const pager = paging.buttons(h, next, results, fetchPage);
    if (pager) results.appendChild(pager);
  };

  body.appendChild(f.node);
  body.appendChild(h("p", { class: "csv" }, csv, " ", h("span", { class: "muted" }, "Every order matching the applied filters, as CSV.")));
  body.appendChild(results);
  apply();
}
