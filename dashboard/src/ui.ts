// The screens' building blocks: labelled fields whose errors are linked (aria-describedby) and
// announced (role="alert"), forms, busy buttons, tables that scroll inside their own region,
// read-only boxes with Copy, an inline confirm step and the modal dialog. Plain DOM through
// the widget's element builder (text never parsed as HTML).

import type { Api, Cursor, Failure, Me, Result } from "./api";
import { append, builder, clear, type Attrs, type Child } from "../../widget/src/page/dom";
import { failureText } from "./format";

export { append, clear, type Child } from "../../widget/src/page/dom";

export type H = ReturnType<typeof builder>;

/** What a screen gets from the app. */
export interface Ctx {
  h: H;
  doc: Document;
  api: Api;
  /** The signed-in member (the sign-in screens get a placeholder they never read). */
  me: Me;
  /** Whether the screen is still the one shown (late answers are dropped). */
  alive(): boolean;
  /** Waits for `answer`: null when the screen is gone meanwhile, or when the answer was 401
   * (the app has then shown the sign-in screen). */
  call<T>(answer: Promise<Result<T>>): Promise<Result<T> | null>;
  /** Says `text` through the polite live region. */
  say(text: string): void;
  /** Copies `text` to the clipboard; says whether it worked (`what`: "Key", "Codes"...). When
   * the clipboard refuses, `select` (the read-only field showing it) is selected instead. */
  copy(text: string, what: string, select?: HTMLInputElement | HTMLTextAreaElement): void;
  /** Offers `text` as a download named `name` (a Blob URL); absent where the browser cannot. */
  save?: (name: string, text: string) => void;
  /** Focuses the screen's heading (after a retry replaced the focused button). */
  focusHeading(): void;
  /** Asks `me` again and shows the current page (after the member changed their own role). */
  reloadMe(): void;
}

export interface Field {
  node: HTMLElement;
  input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;
  value(): string;
  /** Shows `message` under the field (linked and announced); null clears it. */
  setError(message: string | null): void;
}

export interface FieldOptions {
  id: string;
  label: string;
  value?: string;
  type?: string;
  /** A hint under the label, linked with aria-describedby. */
  hint?: Child;
  multiline?: boolean;
  /** [value, text] pairs: a select in place of an input. */
  options?: [string, string][];
  attrs?: Attrs;
}

/** A labelled input, textarea or select with its hint and its error line. */
export function field(h: H, o: FieldOptions): Field {
  const errorId = o.id + "-error";
  const hintId = o.hint ? o.id + "-hint" : null;
  const error = h("p", { id: errorId, class: "field-error", role: "alert" });
  const common: Attrs = { id: o.id, name: o.id, "aria-describedby": (hintId ? hintId + " " : "") + errorId, ...(o.attrs || {}) };
  let input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;
  if (o.options) {
    input = h("select", common, o.options.map(([value, text]) => h("option", { value, selected: value === (o.value || "") }, text))) as HTMLSelectElement;
  } else if (o.multiline) {
    input = h("textarea", { rows: 4, ...common }) as HTMLTextAreaElement;
    input.value = o.value || "";
  } else {
    input = h("input", { type: o.type || "text", ...common }) as HTMLInputElement;
    if (o.value) input.setAttribute("value", o.value);
  }
  const node = h("div", { class: "field" }, h("label", { for: o.id }, o.label), o.hint ? h("div", { id: hintId, class: "hint" }, o.hint) : null, input, error);
  return {
    node,
    input,
    value: () => input.value,
    setError(message) {
      error.textContent = message || "";
      if (message) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    },
  };
}

/** A group of checkboxes (or radios) in a fieldset with its legend and error line. */
export function choices(h: H, o: { id: string; legend: string; type: "checkbox" | "radio"; options: [string, string][]; checked: string[]; hint?: Child }) {
  const errorId = o.id + "-error";
  const error = h("p", { id: errorId, class: "field-error", role: "alert" });
  const inputs = o.options.map(([value], i) =>
    h("input", { type: o.type, id: o.id + "-" + i, name: o.id, value, checked: o.checked.indexOf(value) >= 0 }) as HTMLInputElement,
  );
  const hintId = o.hint ? o.id + "-hint" : null;
  const node = h(
    "fieldset",
    { class: "choices", id: o.id, "aria-describedby": (hintId ? hintId + " " : "") + errorId },
    h("legend", null, o.legend),
    o.hint ? h("p", { id: hintId, class: "hint" }, o.hint) : null,
    h("ul", null, o.options.map(([, text], i) => h("li", { class: "check" }, inputs[i], h("label", { for: o.id + "-" + i }, text)))),
    error,
  );
  return {
    node,
    inputs,
    values: () => inputs.filter((i) => i.checked).map((i) => i.value),
    setError(message: string | null) {
      error.textContent = message || "";
    },
  };
}

/** A form: `novalidate` (the server's rules speak, next to the fields), a form-level alert line
 * above the buttons and the submit button. `submit` runs on Enter and on the button. */
export function form(h: H, o: { label?: string; children: Child[]; submit: string; onSubmit: (button: HTMLElement) => void; extra?: Child; id?: string }) {
  const alert = h("div", { class: "form-error", role: "alert" });
  const button = h("button", { type: "submit", class: "primary" }, o.submit);
  const node = h(
    "form",
    {
      novalidate: true,
      id: o.id,
      "aria-label": o.label,
      onsubmit: (event: Event) => {
        event.preventDefault();
        if (button.getAttribute("aria-disabled") !== "true") o.onSubmit(button);
      },
    },
    o.children,
    alert,
    h("div", { class: "actions" }, button, o.extra),
  );
  return { node, alert, button };
}

/** Runs `task` with `button` saying `label` and refusing clicks until it is done. */
export async function busy<T>(button: HTMLElement, label: string, task: () => Promise<T>): Promise<T> {
  const text = button.textContent || "";
  button.setAttribute("aria-disabled", "true");
  button.textContent = label;
  try {
    return await task();
  } finally {
    button.removeAttribute("aria-disabled");
    button.textContent = text;
  }
}

/** A button of the page's own (not a form's submit). */
export function button(h: H, text: string, onClick: (event: Event) => void, cls = "secondary", attrs: Attrs = {}): HTMLElement {
  return h("button", { type: "button", class: cls, onclick: onClick, ...attrs }, text);
}

/**
 * Shows `failure` in `into` (a role="alert" element): its words, and for a failure that may
 * pass by itself (no answer, 5xx, 429 after its wait) a "Try again" button running `retry`.
 */
export function showFailure(ctx: Ctx, into: HTMLElement, failure: Failure, retry?: () => void): void {
  const h = ctx.h;
  clear(into);
  into.appendChild(h("p", null, failureText(failure)));
  if (retry && (failure.status === 0 || failure.status >= 500)) {
    into.appendChild(
      button(h, "Try again", () => {
        clear(into);
        retry();
      }),
    );
  }
}

/** "Loading…", announced politely. */
export function loading(h: H): HTMLElement {
  return h("p", { class: "loading", role: "status" }, h("span", { class: "spinner", "aria-hidden": "true" }), "Loading\u2026");
}

/**
 * Fills `into` from `task`: "Loading…" first, then `draw(value)`, or the failure with a
 * "Try again" button that loads again.
 */
export async function load<T>(ctx: Ctx, into: HTMLElement, task: () => Promise<Result<T>>, draw: (value: T) => void): Promise<void> {
  clear(into);
  into.appendChild(loading(ctx.h));
  const answer = await ctx.call(task());
  if (!answer) return;
  clear(into);
  if (answer.ok) {
    draw(answer.value);
    return;
  }
  const h = ctx.h;
  into.appendChild(
    h(
      "div",
      { class: "problem", role: "alert" },
      h("p", null, failureText(answer)),
      answer.status === 403 || answer.status === 404
        ? null
        : button(h, "Try again", () => {
            ctx.focusHeading();
            void load(ctx, into, task, draw);
          }),
    ),
  );
}

/** A table in a region that scrolls sideways on a narrow screen (focusable, so a keyboard can
 * scroll it), with its caption. */
export function table(h: H, o: { id: string; caption: string; head: string[]; rows: Child[][]; empty: string }): HTMLElement {
  if (!o.rows.length) return h("p", { class: "empty", id: o.id }, o.empty);
  const captionId = o.id + "-caption";
  return h(
    "div",
    { class: "table-wrap", role: "region", tabindex: "0", "aria-labelledby": captionId, id: o.id },
    h(
      "table",
      null,
      h("caption", { id: captionId }, o.caption),
      h("thead", null, h("tr", null, o.head.map((text) => h("th", { scope: "col" }, text)))),
      h("tbody", null, o.rows.map((cells) => h("tr", null, cells.map((cell) => h("td", null, cell))))),
    ),
  );
}

/** A small label with a state (`good`, `warn`, `info`): words, never colour alone. */
export function badge(h: H, text: string, kind: "good" | "warn" | "info" | "bad"): HTMLElement {
  return h("span", { class: "badge " + kind }, text);
}

/** A `<time>` of a server time. */
export function time(h: H, value: { text: string; iso: string }): Child {
  return value.iso ? h("time", { datetime: value.iso }, value.text) : value.text;
}

/**
 * A secret shown once: a labelled read-only field with Copy and the warning that it will not
 * be shown again. The value lives only in this field; it is gone when the screen is.
 */
export function secretBox(ctx: Ctx, o: { id: string; label: string; value: string; what: string; warning?: string }): HTMLElement {
  const h = ctx.h;
  const input = h("input", { type: "text", id: o.id, readonly: true, class: "mono", spellcheck: "false", autocomplete: "off", "aria-describedby": o.id + "-warning" }) as HTMLInputElement;
  input.value = o.value;
  return h(
    "div",
    { class: "secret" },
    h("p", { class: "warning", id: o.id + "-warning" }, o.warning || "Copy it now: it will not be shown again."),
    h("label", { for: o.id }, o.label),
    h("div", { class: "copy-row" }, input, button(h, "Copy", () => ctx.copy(input.value, o.what, input), "secondary", { "aria-label": "Copy " + o.label.toLowerCase() })),
  );
}

/** A read-only value that is not secret (the publishable key, a snippet) with Copy. */
export function copyBox(ctx: Ctx, o: { id: string; label: string; value: string; what: string; multiline?: boolean; hint?: Child }): HTMLElement {
  const h = ctx.h;
  const attrs: Attrs = { id: o.id, readonly: true, class: "mono", spellcheck: "false" };
  if (o.hint) attrs["aria-describedby"] = o.id + "-hint";
  const input = (o.multiline ? h("textarea", { rows: 3, ...attrs }) : h("input", { type: "text", ...attrs })) as HTMLInputElement | HTMLTextAreaElement;
  input.value = o.value;
  return h(
    "div",
    { class: "field" },
    h("label", { for: o.id }, o.label),
    o.hint ? h("div", { class: "hint", id: o.id + "-hint" }, o.hint) : null,
    h("div", { class: o.multiline ? "copy-col" : "copy-row" }, input, button(h, "Copy", () => ctx.copy(input.value, o.what, input), "secondary", { "aria-label": "Copy " + o.label.toLowerCase() })),
  );
}

/**
 * A button for a destructive action with an inline confirm step: it becomes the question with
 * the action's button and "Cancel" (focused). `act` gets the confirming button (for `busy`)
 * and `reset`, which puts the first button back (without moving focus).
 */
export function confirmAction(
  ctx: Ctx,
  o: { label: string; question: string; confirm: string; act: (button: HTMLElement, reset: () => void) => Promise<void> | void; accessibleLabel?: string; small?: boolean },
): HTMLElement {
  const h = ctx.h;
  const size = o.small ? " small" : "";
  const holder = h("span", { class: "confirm" });
  const first = button(h, o.label, () => ask(), "danger" + size, o.accessibleLabel ? { "aria-label": o.accessibleLabel } : {});
  const back = (focus: boolean) => {
    clear(holder);
    holder.appendChild(first);
    if (focus) first.focus();
  };
  const ask = () => {
    clear(holder);
    const cancel = button(h, "Cancel", () => back(true), "secondary" + size);
    const yes = button(h, o.confirm, () => {
      if (yes.getAttribute("aria-disabled") !== "true") void o.act(yes, () => back(false));
    }, "danger" + size);
    holder.appendChild(h("span", { class: "confirm-ask", role: "group", "aria-label": o.question }, h("span", { class: "question" }, o.question), yes, cancel));
    cancel.focus();
  };
  holder.appendChild(first);
  return holder;
}

/** Elements Tab reaches inside `root`, in order (of a radio group, only the checked one). */
function focusables(root: HTMLElement): HTMLElement[] {
  const list = root.querySelectorAll<HTMLElement>("button, [href], input, select, textarea, [tabindex]:not([tabindex='-1'])");
  return Array.prototype.slice.call(list).filter((el: HTMLElement) => {
    if (el.hasAttribute("disabled") || el.hasAttribute("hidden")) return false;
    const input = el as HTMLInputElement;
    return !(el.tagName === "INPUT" && input.type === "radio" && !input.checked);
  });
}

/**
 * A modal dialog (`<dialog>` shown with showModal: the rest of the page is inert), labelled by
 * its heading, with Tab kept inside it and Escape closing it. `build(close)` gives its content;
 * on close the dialog is removed and focus returns to `opener`.
 */
export function openDialog(ctx: Ctx, o: { id: string; title: string; opener: HTMLElement; build: (close: () => void, body: HTMLElement) => Child[]; onClose?: () => void }): void {
  const h = ctx.h;
  const doc = ctx.doc;
  const body = h("div", { class: "dialog-body" });
  const dialog = h("dialog", { id: o.id, class: "dialog", "aria-labelledby": o.id + "-title" }) as HTMLDialogElement;
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    if (typeof dialog.close === "function" && dialog.open) dialog.close();
    if (dialog.parentNode) dialog.parentNode.removeChild(dialog);
    if (o.onClose) o.onClose();
    if (o.opener.isConnected) o.opener.focus();
  };
  dialog.addEventListener("cancel", (event) => {
    event.preventDefault();
    close();
  });
  dialog.addEventListener("keydown", (event: KeyboardEvent) => {
    if (event.key === "Escape") {
      event.preventDefault();
      close();
    } else if (event.key === "Tab") {
      const list = focusables(dialog);
      if (!list.length) return;
      const first = list[0];
      const last = list[list.length - 1];
      if (event.shiftKey && doc.activeElement === first) {
        event.preventDefault();
        last.focus();
      } else if (!event.shiftKey && doc.activeElement === last) {
        event.preventDefault();
        first.focus();
      }
    }
  });
  const heading = h("h2", { id: o.id + "-title", tabindex: "-1" }, o.title);
  dialog.appendChild(heading);
  dialog.appendChild(body);
  append(doc, body, o.build(close, body));
  doc.body.appendChild(dialog);
  if (typeof dialog.showModal === "function") dialog.showModal();
  else {
    dialog.setAttribute("open", "");
    dialog.setAttribute("role", "dialog");
    dialog.setAttribute("aria-modal", "true");
  }
  const first = focusables(body)[0];
  (first || heading).focus();
}

/** A cursor that names a further page (the answers' `next`: null, absent or "" on the last). */
export function hasNext(next: Cursor | undefined): next is string | number {
  return next !== null && next !== undefined && next !== "";
}

/**
 * Paging by the answers' cursors: the cursor of the page shown and those of the pages before it
 * (for "Previous page"). After a move, focus goes to the new page's table in `results` (the
 * pressed button is gone with the old page).
 */
export class Paging {
  private before: Cursor[] = [];
  cursor: Cursor = null;

  reset(): void {
    this.before = [];
    this.cursor = null;
  }

  /** "" on the first page, else " (page N)" for a caption. */
  label(): string {
    return this.before.length ? " (page " + (this.before.length + 1) + ")" : "";
  }

  /** The pager under a page whose answer said `next`; null when there is nowhere to go. */
  buttons(h: H, next: Cursor | undefined, results: HTMLElement, fetch: () => Promise<void>, labels: [string, string] = ["Previous page", "Next page"]): HTMLElement | null {
    const pager = h("div", { class: "pager" });
    const move = (to: Cursor, forward: boolean): void => {
      if (forward) this.before.push(this.cursor);
      else this.before.pop();
      this.cursor = to;
      void fetch().then(() => {
        const target = results.querySelector(".table-wrap, .empty") as HTMLElement | null;
        if (!target) return;
        if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
        target.focus();
      });
    };
    if (this.before.length) pager.appendChild(button(h, labels[0], () => move(this.before[this.before.length - 1], false)));
    if (hasNext(next)) pager.appendChild(button(h, labels[1], () => move(next, true)));
    return pager.firstChild ? pager : null;
  }
}
