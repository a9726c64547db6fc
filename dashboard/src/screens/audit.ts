// Audit: the partner's hash chain, oldest first, a page at a time (`after` = the previous
// page's `next`), with the server's verification of the whole chain as a badge.

import type { AuditEvent, Verification } from "../api";
import { formatTime } from "../format";
import { badge, clear, loading, Paging, showFailure, table, time, type Ctx } from "../ui";

/** The chain's state in words. */
export function verificationText(v: Verification): string {
  return v.ok ? "Chain verified: " + v.rows + (v.rows === 1 ? " row" : " rows") : "Chain broken at row " + (v.firstBadSeq === null ? "?" : v.firstBadSeq);
}

/** An event's details (enums, counts, ids and times) as `name: value` text. */
export function detailsText(details: unknown): string {
  if (details === null || details === undefined) return "";
  if (typeof details !== "object") return String(details);
  return Object.keys(details as object)
    .map((key) => {
      const value = (details as { [key: string]: unknown })[key];
      return key + ": " + (typeof value === "object" && value !== null ? JSON.stringify(value) : String(value));
    })
    .join(", ");
}

export function audit(ctx: Ctx, body: HTMLElement): void {
  const h = ctx.h;
  const paging = new Paging();
  const state = h("p", { class: "chain", id: "chain-state" });
  const results = h("div", { class: "results" });
  body.appendChild(h("p", { class: "muted" }, "Every change to your contacts, widget, keys, webhooks and team, in order. Each row carries the hash of the one before, so a changed or missing row breaks the chain."));
  body.appendChild(state);
  body.appendChild(results);

  const fetchPage = async (): Promise<void> => {
    clear(results);
    results.appendChild(loading(h));
    const answer = await ctx.call(ctx.api.audit(paging.cursor));
    if (!answer) return;
    clear(results);
    if (!answer.ok) {
      const alert = h("div", { class: "problem", role: "alert" });
      results.appendChild(alert);
      showFailure(ctx, alert, answer, () => void fetchPage());
      return;
    }
    const v = answer.value.verification;
    clear(state);
    state.appendChild(badge(h, verificationText(v), v.ok ? "good" : "bad"));
    const events: AuditEvent[] = answer.value.events;
    results.appendChild(
      table(h, {
        id: "audit-table",
        caption: "Audit trail, oldest first" + paging.label(),
        head: ["Row", "Time", "Event", "Actor", "Contact", "Details"],
        empty: "No audit rows yet.",
        rows: events.map((e) => [
          String(e.seq),
          time(h, formatTime(e.at)),
          h("code", null, e.event),
          h("code", null, e.actor),
          e.contactId ? h("code", null, e.contactId) : "\u2013",
          h("span", { class: "details" }, detailsText(e.details)),
        ]),
      }),
    );
    const pager = paging.buttons(h, answer.value.next, results, fetchPage);
    if (pager) results.appendChild(pager);
  };
  void fetchPage();
}
