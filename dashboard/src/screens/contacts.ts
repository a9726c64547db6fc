// Contacts: the counts by 2FA state, and the three lists the go-live rule needs (KYC passed but
// 2FA not enabled, locked, 3 or fewer recovery codes left), one at a time, paged.

import type { Contact, ContactListKind, Counts } from "../api";
import { badge, button, clear, load, loading, Paging, showFailure, table, type Ctx } from "../ui";

export const LISTS: [ContactListKind, string, string][] = [
  ["kyc-without-2fa", "KYC passed, 2FA off", "Contacts who passed KYC but have not turned on 2FA."],
  ["locked", "Locked", "Contacts whose 2FA is locked after too many wrong codes."],
  ["low-recovery-codes", "Few recovery codes", "Contacts with 3 or fewer recovery codes left."],
];

const TWO_FACTOR: { [state: string]: [string, "good" | "warn" | "bad"] } = {
  enabled: ["Enabled", "good"],
  not_enabled: ["Not enabled", "warn"],
  locked: ["Locked", "bad"],
};

export function contacts(ctx: Ctx, body: HTMLElement): void {
  const h = ctx.h;
  const counts = h("div", null);
  const lists = h("section", { "aria-labelledby": "lists-title" });
  body.appendChild(counts);
  body.appendChild(lists);
  void load(ctx, counts, () => ctx.api.contacts(), (value: { counts: Counts }) => {
    const c = value.counts;
    const row = (term: string, n: number) => [h("dt", null, term), h("dd", null, String(n))];
    counts.appendChild(
      h(
        "dl",
        { class: "summary counts", "aria-label": "Contacts by 2FA state" },
        row("2FA enabled", c.enabled),
        row("2FA not enabled", c.notEnabled),
        row("2FA locked", c.locked),
        row("KYC passed, 2FA off", c.kycWithout2fa),
        row("3 or fewer recovery codes", c.lowRecoveryCodes),
      ),
    );
  });

  let kind: ContactListKind = "kyc-without-2fa";
  const paging = new Paging();
  const switcher = h("div", { class: "segmented", role: "group", "aria-label": "Which contacts" });
  const about = h("p", { class: "muted", id: "list-about" });
  const results = h("div", { class: "results" });
  const buttons = LISTS.map(([k, title]) =>
    button(h, title, () => {
      kind = k;
      paging.reset();
      mark();
      void fetchPage();
    }, "toggle"),
  );
  const mark = (): void => {
    LISTS.forEach(([k, , text], i) => {
      buttons[i].setAttribute("aria-pressed", k === kind ? "true" : "false");
      if (k === kind) about.textContent = text;
    });
  };
  for (const b of buttons) switcher.appendChild(b);

  const fetchPage = async (): Promise<void> => {
    clear(results);
    results.appendChild(loading(h));
    const answer = await ctx.call(ctx.api.contactList(kind, paging.cursor));
    if (!answer) return;
    clear(results);
    if (!answer.ok) {
      const alert = h("div", { class: "problem", role: "alert" });
      results.appendChild(alert);
      showFailure(ctx, alert, answer, () => void fetchPage());
      return;
    }
    const list: Contact[] = answer.value.contacts;
    const title = (LISTS.find((l) => l[0] === kind) || LISTS[0])[1];
    results.appendChild(
      table(h, {
        id: "contacts-table",
        caption: title + paging.label(),
        head: ["Contact", "2FA", "Recovery codes left"],
        empty: "No contacts in this list.",
        rows: list.map((c) => {
          const state = TWO_FACTOR[c.twoFactor] || [c.twoFactor, "warn"];
          return [h("code", null, c.contactId), badge(h, state[0], state[1]), c.recoveryCodesRemaining === null ? "\u2013" : String(c.recoveryCodesRemaining)];
        }),
      }),
    );
    ctx.say(list.length ? list.length + (list.length === 1 ? " contact" : " contacts") + " shown." : "No contacts in this list.");
    const pager = paging.buttons(h, answer.value.next, results, fetchPage);
    if (pager) results.appendChild(pager);
  };

  lists.appendChild(h("h2", { id: "lists-title" }, "Contacts to follow up"));
  lists.appendChild(switcher);
  lists.appendChild(about);
  lists.appendChild(results);
  mark();
  void fetchPage();
}
