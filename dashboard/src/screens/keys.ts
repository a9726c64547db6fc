// API keys: the publishable key (with Copy), the secret key only as its prefix and last 4
// characters, the previous key while it still works, and "Roll secret key": a dialog to pick
// how long the current key keeps working, then the new key, shown once.

import type { Expiry, Keys } from "../api";
import { formatTime, maskKey } from "../format";
import { badge, busy, button, choices, clear, copyBox, form, load, openDialog, secretBox, showFailure, time, type Ctx } from "../ui";

export const EXPIRIES: [Expiry, string][] = [
  ["now", "Now"],
  ["1h", "In 1 hour"],
  ["24h", "In 24 hours"],
  ["7d", "In 7 days"],
];

export function keys(ctx: Ctx, body: HTMLElement): void {
  const h = ctx.h;
  let roll: HTMLElement | null = null;
  /** After a roll: the keys again, and focus back on the (new) Roll button. */
  const reload = (): void => {
    void load(ctx, body, () => ctx.api.keys(), draw).then(() => {
      if (roll) roll.focus();
    });
  };
  const draw = (k: Keys): void => {
    body.appendChild(
      copyBox(ctx, {
        id: "publishable-key",
        label: "Publishable key",
        value: k.publishableKey,
        what: "Publishable key",
        hint: "Goes in your web pages (the widget's publicKey). It is not a secret.",
      }),
    );
    body.appendChild(h("h2", null, "Secret key"));
    body.appendChild(h("p", { class: "muted" }, "Your server uses it for the API. For safety only its start and end are shown here."));
    const rows: HTMLElement[] = [h("dt", null, "Current"), h("dd", null, h("code", { id: "secret-key" }, maskKey(k.secretKey)))];
    rows.push(h("dt", null, "Previous"));
    rows.push(
      h(
        "dd",
        { id: "previous-key" },
        k.previousKey
          ? [h("code", null, maskKey(k.previousKey)), " ", badge(h, "Still works", "warn"), " until ", time(h, formatTime(k.previousKey.expiresAt))]
          : "None: only the current key works.",
      ),
    );
    body.appendChild(h("dl", { class: "summary" }, rows));
    if (ctx.me.permissions.keys) {
      const opener: HTMLElement = button(h, "Roll secret key", () => rollDialog(ctx, opener, reload), "primary");
      roll = opener;
      body.appendChild(h("div", { class: "actions" }, opener));
    } else {
      body.appendChild(h("p", { class: "muted" }, "Your role can see the keys but not roll them."));
    }
  };
  void load(ctx, body, () => ctx.api.keys(), draw);
}

/** The roll dialog: the four expiries as radio buttons, then the new key once. `done` reloads
 * the page's keys when the dialog closes after a roll. */
function rollDialog(ctx: Ctx, opener: HTMLElement, done: () => void): void {
  const h = ctx.h;
  let rolled = false;
  openDialog(ctx, {
    id: "roll-dialog",
    title: "Roll secret key",
    opener,
    onClose: () => {
      if (rolled) done();
    },
    build: (close, dialogBody) => {
      const expiry = choices(h, {
        id: "expires-in",
        legend: "Keep the current key working until",
        type: "radio",
        options: EXPIRIES,
        checked: ["24h"],
        hint: "Time to put the new key in place on your servers. After that only the new key works.",
      });
      const f = form(h, {
        label: "Roll secret key",
        children: [h("p", null, "A new secret key replaces the current one."), expiry.node],
        submit: "Roll key",
        extra: button(h, "Cancel", close),
        onSubmit: (submit) => void send(submit),
      });
      const send = async (submit: HTMLElement): Promise<void> => {
        const chosen = expiry.values()[0] as Expiry | undefined;
        expiry.setError(null);
        clear(f.alert);
        if (!chosen) {
          expiry.setError("Choose when the current key stops working.");
          return;
        }
        const answer = await ctx.call(busy(submit, "Rolling\u2026", () => ctx.api.rollKey(chosen)));
        if (!answer) return;
        if (!answer.ok) {
          if (answer.field === "expiresIn" && answer.status === 400) expiry.setError(answer.message);
          else showFailure(ctx, f.alert, answer, () => void send(submit));
          return;
        }
        rolled = true;
        clear(dialogBody);
        const closeButton = button(h, "Done", close, "primary");
        dialogBody.appendChild(h("p", { role: "status" }, answer.message || "Secret key rolled."));
        dialogBody.appendChild(
          secretBox(ctx, { id: "new-secret-key", label: "New secret key", value: answer.value.secretKey, what: "Secret key", warning: "Copy the new key now and store it on your servers: it will not be shown again." }),
        );
        if (answer.value.previousKey) {
          dialogBody.appendChild(h("p", null, "The previous key ", h("code", null, maskKey(answer.value.previousKey)), " works until ", time(h, formatTime(answer.value.previousKey.expiresAt)), "."));
        } else {
          dialogBody.appendChild(h("p", null, "The previous key stopped working now."));
        }
        dialogBody.appendChild(h("div", { class: "actions" }, closeButton));
        const input = dialogBody.querySelector("input");
        if (input) (input as HTMLInputElement).focus();
      };
      return [f.node];
    },
  });
}
