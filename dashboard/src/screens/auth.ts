// The screens before a session: sign-in (email and password, then the authenticator's code or
// a recovery code), the invitation (who invited whom, then a password), the authenticator's
// setup (QR, the manual key in groups, a code) and the recovery codes shown once.
//
// Nothing typed or received here is kept beyond its screen: the invitation token, password,
// codes and manual key live in the screen's closures and DOM, which go when the next screen
// is shown. None is written to storage, a cookie, a URL or the console.

import type { Failure, Invitation, Me, TwoFactorSetup } from "../api";
import { fieldFor, formatTime, groupKey, PASSWORD_RULES, passwordMismatch, roleName } from "../format";
import { busy, button, clear, field, form, showFailure, time, type Ctx, type Field } from "../ui";

export interface AuthHost {
  /** Shows a new signed-out screen titled `title`. */
  show(title: string, build: (ctx: Ctx, body: HTMLElement) => void): void;
  /** Signed in: the page the hash names. */
  signedIn(me: Me): void;
  /** The setup is done and the codes are saved: load `me` and show the overview. */
  afterSetup(): void;
}

/** The message of the 401 for a missing or idle session (API.md), as against a wrong code. */
const NO_SESSION = "Sign in to continue.";
export const SESSION_ENDED = "Your session ended. Sign in again.";
export const CODES_FILE = "rampart-dashboard-recovery-codes.txt";

/** Shows `failure` next to the field it names (one of `fields`), else in `alert`; focuses the
 * field. */
function showError(ctx: Ctx, failure: Failure, fields: { [name: string]: Field }, alert: HTMLElement, retry?: () => void): void {
  for (const name of Object.keys(fields)) fields[name].setError(null);
  clear(alert);
  const name = fieldFor(failure, Object.keys(fields));
  if (name && failure.status === 400) {
    fields[name].setError(failure.message);
    fields[name].input.focus();
  } else {
    showFailure(ctx, alert, failure, retry);
  }
}

export function auth(host: AuthHost) {
  // ---- sign-in ------------------------------------------------------------------------------

  function signIn(notice: string | null): void {
    host.show("Sign in", (ctx, body) => {
      const h = ctx.h;
      const email = field(h, { id: "email", label: "Email", type: "email", attrs: { autocomplete: "username", spellcheck: "false", autocapitalize: "none" } });
      const password = field(h, { id: "password", label: "Password", type: "password", attrs: { autocomplete: "current-password" } });
      const f = form(h, {
        label: "Sign in",
        children: [email.node, password.node],
        submit: "Continue",
        onSubmit: (submit) => void send(submit),
      });
      const send = async (submit: HTMLElement): Promise<void> => {
        const fields = { email, password };
        if (!email.value().trim()) {
          email.setError("Enter your email.");
          email.input.focus();
          return;
        }
        email.setError(null);
        if (!password.value()) {
          password.setError("Enter your password.");
          password.input.focus();
          return;
        }
        password.setError(null);
        const answer = await ctx.call(busy(submit, "Checking\u2026", () => ctx.api.signIn(email.value().trim(), password.value())));
        if (!answer) return;
        if (!answer.ok) {
          showError(ctx, answer, fields, f.alert, () => void send(submit));
          return;
        }
        password.input.value = "";
        if (answer.value.next === "setup") setup(answer.value.twoFactor);
        else code(false);
      };
      if (notice) body.appendChild(h("p", { class: "notice", role: "status" }, notice));
      body.appendChild(h("p", null, "Sign in with the email and password of your dashboard account, then the code from your authenticator app."));
      body.appendChild(f.node);
      body.appendChild(h("p", { class: "muted" }, "No account yet? An owner of your team sends you an invitation link."));
    });
  }

  /** The second step: the authenticator's code, or a recovery code (`recovery`). */
  function code(recovery: boolean): void {
    host.show(recovery ? "Enter a recovery code" : "Enter your code", (ctx, body) => {
      const h = ctx.h;
      const input = recovery
        ? field(h, { id: "recovery-code", label: "Recovery code", hint: "One of the codes you saved when you set up your authenticator. Each works once.", attrs: { autocomplete: "off", spellcheck: "false", autocapitalize: "characters", class: "mono" } })
        : field(h, { id: "code", label: "Authenticator code", hint: "The 6-digit code your authenticator app shows now.", attrs: { autocomplete: "one-time-code", inputmode: "numeric", spellcheck: "false", class: "mono" } });
      const f = form(h, {
        label: recovery ? "Recovery code" : "Authenticator code",
        children: [input.node],
        submit: "Sign in",
        onSubmit: (submit) => void send(submit),
      });
      const send = async (submit: HTMLElement): Promise<void> => {
        const value = input.value().trim();
        if (!value) {
          input.setError(recovery ? "Enter a recovery code." : "Enter the code from your authenticator app.");
          input.input.focus();
          return;
        }
        input.setError(null);
        clear(f.alert);
        const answer = await ctx.call(busy(submit, "Checking\u2026", () => ctx.api.signInCode(value, recovery)));
        if (!answer) return;
        if (answer.ok) {
          input.input.value = "";
          host.signedIn(answer.value.me);
          return;
        }
        if (answer.status === 401 && answer.message === NO_SESSION) {
          signIn(SESSION_ENDED);
          return;
        }
        if (answer.status === 401) {
          // API.md: "Invalid token"; said in the page's words, next to the field.
          input.setError(recovery ? "This recovery code does not work: it is wrong or used already." : "This code is wrong or expired. Enter the code your app shows now.");
          input.input.focus();
          (input.input as HTMLInputElement).select();
          return;
        }
        showError(ctx, answer, recovery ? { recoveryCode: input } : { code: input }, f.alert, () => void send(submit));
      };
      body.appendChild(h("p", null, recovery ? "Lost your authenticator? A recovery code signs you in once." : "Open your authenticator app and enter the code it shows for Rampart."));
      body.appendChild(f.node);
      body.appendChild(
        h(
          "p",
          { class: "more" },
          button(h, recovery ? "Use an authenticator code instead" : "Use a recovery code instead", () => code(!recovery), "link"),
          button(h, "Start over", () => signIn(null), "link"),
        ),
      );
    });
  }

  // ---- invitation ---------------------------------------------------------------------------

  function invitation(token: string): void {
    host.show("Accept your invitation", (ctx, body) => {
      const h = ctx.h;
      if (!token) {
        body.appendChild(h("div", { class: "problem", role: "alert" }, h("p", null, "This invitation link is incomplete. Ask the person who invited you for the whole link.")));
        body.appendChild(h("p", null, button(h, "Go to sign-in", () => signIn(null))));
        return;
      }
      const run = async (): Promise<void> => {
        clear(body);
        body.appendChild(h("p", { class: "loading", role: "status" }, h("span", { class: "spinner", "aria-hidden": "true" }), "Looking up your invitation\u2026"));
        const answer = await ctx.call(ctx.api.invitation(token));
        if (!answer) return;
        clear(body);
        if (!answer.ok) {
          const problem = h("div", { class: "problem", role: "alert" });
          body.appendChild(problem);
          showFailure(ctx, problem, answer, () => void run());
          if (answer.status === 404 || answer.status === 410) {
            problem.appendChild(h("p", null, "Ask an owner of your team for a new invitation."));
          }
          body.appendChild(h("p", null, button(h, "Go to sign-in", () => signIn(null))));
          return;
        }
        choosePassword(ctx, body, token, answer.value.invitation);
      };
      void run();
    });
  }

  function choosePassword(ctx: Ctx, body: HTMLElement, token: string, inv: Invitation): void {
    const h = ctx.h;
    const expires = formatTime(inv.expiresAt);
    const rules = h("ul", { class: "rules" }, PASSWORD_RULES.map((rule) => h("li", null, rule)));
    const password = field(h, { id: "new-password", label: "Password", type: "password", hint: rules, attrs: { autocomplete: "new-password" } });
    const confirm = field(h, { id: "confirm-password", label: "Password again", type: "password", attrs: { autocomplete: "new-password" } });
    const f = form(h, {
      label: "Choose a password",
      children: [
        // The account's email, for password managers to save with the new password.
        h("input", { type: "text", hidden: true, autocomplete: "username", value: inv.email, readonly: true, name: "username" }),
        password.node,
        confirm.node,
      ],
      submit: "Set password",
      onSubmit: (submit) => void send(submit),
    });
    const send = async (submit: HTMLElement): Promise<void> => {
      clear(f.alert);
      password.setError(null);
      confirm.setError(null);
      if (!password.value()) {
        password.setError("Choose a password.");
        password.input.focus();
        return;
      }
      const mismatch = passwordMismatch(password.value(), confirm.value());
      if (mismatch) {
        confirm.setError(mismatch);
        confirm.input.focus();
        return;
      }
      const answer = await ctx.call(busy(submit, "Setting password\u2026", () => ctx.api.acceptInvitation(token, password.value())));
      if (!answer) return;
      if (!answer.ok) {
        showError(ctx, answer, { password }, f.alert, () => void send(submit));
        return;
      }
      password.input.value = "";
      confirm.input.value = "";
      setup(answer.value.twoFactor);
    };
    body.appendChild(
      h(
        "dl",
        { class: "summary" },
        h("dt", null, "Email"),
        h("dd", null, inv.email),
        h("dt", null, "Partner"),
        h("dd", null, inv.partnerName),
        h("dt", null, "Role"),
        h("dd", null, roleName(inv.role)),
        h("dt", null, "Link valid until"),
        h("dd", null, time(h, expires)),
      ),
    );
    body.appendChild(h("h2", null, "Choose a password"));
    body.appendChild(f.node);
  }

  // ---- the authenticator's setup and the recovery codes ------------------------------------

  function setup(twoFactor: TwoFactorSetup): void {
    host.show("Set up your authenticator", (ctx, body) => {
      const h = ctx.h;
      const codeField = field(h, {
        id: "setup-code",
        label: "Code from the app",
        hint: "After adding the account, enter the 6-digit code the app shows.",
        attrs: { autocomplete: "one-time-code", inputmode: "numeric", spellcheck: "false", class: "mono" },
      });
      const f = form(h, {
        label: "Turn on two-factor authentication",
        children: [codeField.node],
        submit: "Turn on",
        onSubmit: (submit) => void send(submit),
      });
      const send = async (submit: HTMLElement): Promise<void> => {
        clear(f.alert);
        const value = codeField.value().trim();
        if (!value) {
          codeField.setError("Enter the code from your authenticator app.");
          codeField.input.focus();
          return;
        }
        codeField.setError(null);
        const answer = await ctx.call(busy(submit, "Checking\u2026", () => ctx.api.enableTwoFactor(value)));
        if (!answer) return;
        if (answer.ok) {
          recoveryCodes(answer.value.recoveryCodes);
          return;
        }
        if (answer.status === 401 && answer.message === NO_SESSION) {
          signIn(SESSION_ENDED);
          return;
        }
        if (answer.status === 401) {
          codeField.setError("This code is wrong or expired. Enter the code your app shows now.");
          codeField.input.focus();
          return;
        }
        showError(ctx, answer, { code: codeField }, f.alert, () => void send(submit));
      };
      const account = twoFactor.accountName + (twoFactor.issuer ? " (" + twoFactor.issuer + ")" : "");
      body.appendChild(h("p", null, "The dashboard asks for a code from an authenticator app each time you sign in. Add your account to the app now:"));
      body.appendChild(
        h(
          "div",
          { class: "setup" },
          h("img", {
            class: "qr",
            src: twoFactor.qrCode,
            width: "184",
            height: "184",
            alt: "QR code that adds " + account + " to an authenticator app. If you cannot scan it, type the key shown next to it.",
            // Shown at a whole multiple of its own pixels (at least 184): every module stays sharp.
            onload: (event: Event) => {
              const img = event.target as HTMLImageElement;
              const size = img.naturalWidth;
              if (size > 0) {
                const shown = String(size * Math.max(1, Math.ceil(184 / size)));
                img.setAttribute("width", shown);
                img.setAttribute("height", shown);
              }
            },
          }),
          h(
            "div",
            { class: "manual" },
            h("p", null, "Scan the QR code with the app, or type this key:"),
            h("p", null, h("code", { class: "key", id: "manual-key" }, groupKey(twoFactor.manualKey))),
            h("dl", { class: "summary compact" }, h("dt", null, "Account"), h("dd", null, twoFactor.accountName), h("dt", null, "Issuer"), h("dd", null, twoFactor.issuer), h("dt", null, "Type"), h("dd", null, "Time-based (TOTP)")),
          ),
        ),
      );
      body.appendChild(f.node);
    });
  }

  function recoveryCodes(codes: string[]): void {
    host.show("Save your recovery codes", (ctx, body) => {
      const h = ctx.h;
      const text = codes.join("\n") + "\n";
      body.appendChild(h("p", null, "Two-factor authentication is on. If you lose your authenticator, each of these codes signs you in once."));
      body.appendChild(h("p", { class: "warning" }, "They are shown only now. Keep them somewhere safe, away from this device."));
      body.appendChild(h("ol", { class: "codes", id: "recovery-codes", "aria-label": "Recovery codes" }, codes.map((c) => h("li", null, h("code", null, c)))));
      const save = ctx.save;
      body.appendChild(
        h(
          "div",
          { class: "more" },
          button(h, "Copy", () => ctx.copy(text, "Recovery codes"), "secondary", { "aria-label": "Copy recovery codes" }),
          save
            ? button(h, "Download .txt", () => {
                save(CODES_FILE, text);
                ctx.say("Recovery codes downloaded as " + CODES_FILE + ".");
              }, "secondary", { "aria-label": "Download .txt of the recovery codes" })
            : null,
        ),
      );
      body.appendChild(h("div", { class: "actions" }, button(h, "I have saved these codes", () => host.afterSetup(), "primary")));
    });
  }

  return { signIn, code, invitation, setup, recoveryCodes };
}
