// Widget: the button text and URL and the allowed origins (one per line), saved together; the
// server's rules answer next to the field they name. Beside them a live preview (the real
// widget of this server with the partner's publishable key) and the two snippets to copy.

import type { WidgetChanges, WidgetSettings } from "../api";
import { fieldFor, splitLines } from "../format";
import { badge, busy, clear, copyBox, field, form, load, showFailure, type Ctx } from "../ui";

export function widget(ctx: Ctx, body: HTMLElement): void {
  void load(ctx, body, () => ctx.api.widget(), (w) => draw(ctx, body, w));
}

function draw(ctx: Ctx, body: HTMLElement, w: WidgetSettings): void {
  const h = ctx.h;
  const may = ctx.me.permissions.widget;
  const readonly = may ? {} : { readonly: true };
  const text = field(h, { id: "widgetText", label: "Button text", value: w.widgetText || "", hint: "What the widget's main button says. Empty: the default.", attrs: readonly });
  const url = field(h, {
    id: "widgetButtonURL",
    label: "Button URL",
    value: w.widgetButtonURL || "",
    hint: "Where the button leads, https://... Empty: the widget's own purchase flow.",
    attrs: { inputmode: "url", spellcheck: "false", autocapitalize: "none", ...readonly },
  });
  const origins = field(h, {
    id: "widgetOrigins",
    label: "Allowed origins",
    value: w.widgetOrigins.join("\n"),
    multiline: true,
    hint: "One per line: scheme, host and port of each site that embeds the widget, like https://shop.example.com.",
    attrs: { spellcheck: "false", autocapitalize: "none", class: "mono", ...readonly },
  });
  const fields = { widgetText: text, widgetButtonURL: url, widgetOrigins: origins };
  const preview = h("div", { class: "preview" });
  const snippets = h("div", { class: "snippets" });
  const status = h("p", { class: "muted", id: "widget-state" });

  const show = (s: WidgetSettings): void => {
    clear(status);
    status.appendChild(s.approved ? badge(h, "Approved", "good") : badge(h, "Not approved yet", "warn"));
    status.appendChild(h("span", null, s.approved ? " The widget takes purchases." : " The operator approves production widgets."));
    clear(preview);
    preview.appendChild(h("iframe", { src: s.previewUrl, title: "Preview of your widget", class: "preview-frame", loading: "lazy" }));
    clear(snippets);
    snippets.appendChild(copyBox(ctx, { id: "snippet-script", label: "Script snippet", value: s.snippets.script, what: "Script snippet", multiline: true, hint: "Loads the widget on your page." }));
    snippets.appendChild(copyBox(ctx, { id: "snippet-iframe", label: "Iframe snippet", value: s.snippets.iframe, what: "Iframe snippet", multiline: true, hint: "Embeds the widget without a script." }));
  };

  const send = async (submit: HTMLElement): Promise<void> => {
    for (const name of Object.keys(fields)) fields[name as keyof typeof fields].setError(null);
    clear(f.alert);
    // An empty text or URL is sent as null: back to the widget's default.
    const changes: WidgetChanges = {
      widgetText: text.value().trim() || null,
      widgetButtonURL: url.value().trim() || null,
      widgetOrigins: splitLines(origins.value()),
    };
    const answer = await ctx.call(busy(submit, "Saving\u2026", () => ctx.api.saveWidget(changes)));
    if (!answer) return;
    if (!answer.ok) {
      const name = answer.status === 400 ? fieldFor(answer, Object.keys(fields)) : null;
      if (name) {
        const target = fields[name as keyof typeof fields];
        target.setError(answer.message);
        target.input.focus();
      } else showFailure(ctx, f.alert, answer, () => void send(submit));
      return;
    }
    show(answer.value);
    origins.input.value = answer.value.widgetOrigins.join("\n");
    ctx.say("Widget settings saved.");
    f.alert.appendChild(h("p", { class: "saved" }, "Saved."));
  };
  const f = form(h, { label: "Widget settings", children: [text.node, url.node, origins.node], submit: "Save", onSubmit: (submit) => {
    if (may) void send(submit);
  } });
  if (!may) {
    f.button.remove();
  }
  show(w);
  body.appendChild(status);
  body.appendChild(
    h(
      "div",
      { class: "columns" },
      h("section", { "aria-labelledby": "settings-title" }, h("h2", { id: "settings-title" }, "Settings"), may ? null : h("p", { class: "muted" }, "Your role can see the settings but not change them."), f.node),
      h("section", { "aria-labelledby": "preview-title" }, h("h2", { id: "preview-title" }, "Live preview"), h("p", { class: "muted" }, "The real widget with your publishable key, reloaded after each save."), preview),
    ),
  );
  body.appendChild(h("section", { "aria-labelledby": "snippets-title" }, h("h2", { id: "snippets-title" }, "Snippets"), snippets));
}
