// Team (owners): the members, with their role and removal; the pending invitations, with
// revoke; and the invite form, whose link is shown once (no email is sent: the owner passes it
// on). A team keeps at least one owner: the server refuses the last one's removal or demotion.

import type { Member, PendingInvitation, Role } from "../api";
import { fieldFor, formatTime, roleName } from "../format";
import { badge, busy, button, clear, confirmAction, field, form, load, secretBox, showFailure, table, time, type Ctx } from "../ui";

export const ROLES: [Role, string][] = [
  ["owner", "Owner: everything, including the team"],
  ["developer", "Developer: keys, widget and webhooks"],
  ["viewer", "Viewer: read only"],
];

export function team(ctx: Ctx, body: HTMLElement): void {
  const h = ctx.h;
  if (!ctx.me.permissions.team) {
    body.appendChild(h("p", null, "Only owners of the team can see and manage its members."));
    return;
  }
  const lists = h("div", null);
  const reload = (): Promise<void> => load(ctx, lists, () => ctx.api.team(), (value) => draw(value.members, value.invitations));
  const alert = h("div", { class: "form-error", role: "alert" });

  const draw = (members: Member[], invitations: PendingInvitation[]): void => {
    lists.appendChild(h("h2", { id: "members-title", tabindex: "-1" }, "Members"));
    lists.appendChild(alert);
    lists.appendChild(
      table(h, {
        id: "members-table",
        caption: "Team members",
        head: ["Email", "Role", "2FA", "Added", "Remove"],
        empty: "No members.",
        rows: members.map((m) => memberRow(m)),
      }),
    );
    lists.appendChild(h("h2", { id: "invitations-title", tabindex: "-1" }, "Pending invitations"));
    lists.appendChild(
      table(h, {
        id: "invitations-table",
        caption: "Invitations not yet accepted",
        head: ["Email", "Role", "Link valid until", "Revoke"],
        empty: "No pending invitations.",
        rows: invitations.map((inv) => [
          inv.email,
          roleName(inv.role),
          time(h, formatTime(inv.expiresAt)),
          confirmAction(ctx, {
            label: "Revoke",
            accessibleLabel: "Revoke the invitation of " + inv.email,
            question: "Revoke this invitation? Its link stops working.",
            confirm: "Revoke",
            small: true,
            act: (yes) => change(yes, "Revoking\u2026", () => ctx.api.revokeInvitation(inv.id), "Invitation of " + inv.email + " revoked."),
          }),
        ]),
      }),
    );
  };

  /** Runs a change, then reloads the lists (or shows why it failed above them). `self`: the
   * change is to the member's own role, so what the page may show changes too. */
  const change = async (trigger: HTMLElement, label: string, task: () => ReturnType<typeof ctx.api.removeMember>, done: string, self = false): Promise<void> => {
    clear(alert);
    const answer = await ctx.call(busy(trigger, label, task));
    if (!answer) return;
    if (!answer.ok) {
      showFailure(ctx, alert, answer);
      return;
    }
    ctx.say(done);
    if (self) {
      ctx.reloadMe();
      return;
    }
    await reload();
    const title = lists.querySelector("#members-title") as HTMLElement | null;
    if (title) title.focus();
  };

  const memberRow = (m: Member) => {
    const you = m.id === ctx.me.member.id;
    const select = h("select", { id: "role-" + m.id, "aria-label": "Role of " + m.email }, ROLES.map(([value]) => h("option", { value, selected: value === m.role }, roleName(value)))) as HTMLSelectElement;
    const save = button(h, "Change", () => {
      const role = select.value as Role;
      if (role === m.role) {
        ctx.say(m.email + " is " + roleName(role) + " already.");
        return;
      }
      void change(save, "Changing\u2026", () => ctx.api.setRole(m.id, role), m.email + " is now " + roleName(role) + ".", you);
    }, "secondary small", { "aria-label": "Change the role of " + m.email });
    return [
      [m.email, you ? h("span", { class: "muted" }, " (you)") : null],
      h("span", { class: "role-cell" }, select, save),
      m.twoFactor ? badge(h, "On", "good") : badge(h, "Not set up", "warn"),
      time(h, formatTime(m.createdAt)),
      confirmAction(ctx, {
        label: "Remove",
        accessibleLabel: "Remove " + m.email,
        question: you ? "Remove yourself? You lose access now." : "Remove " + m.email + "? They lose access now.",
        confirm: "Remove",
        small: true,
        act: (yes) => change(yes, "Removing\u2026", () => ctx.api.removeMember(m.id), m.email + " removed.", you),
      }),
    ];
  };

  // ---- the invite form --------------------------------------------------------------------
  const email = field(h, { id: "invite-email", label: "Email", type: "email", attrs: { autocomplete: "off", spellcheck: "false", autocapitalize: "none" } });
  const role = field(h, { id: "invite-role", label: "Role", options: ROLES, value: "developer" });
  const created = h("div", null);
  const f = form(h, {
    label: "Invite a member",
    children: [h("div", { class: "row" }, email.node, role.node)],
    submit: "Create invitation",
    onSubmit: (submit) => void invite(submit),
  });
  const invite = async (submit: HTMLElement): Promise<void> => {
    email.setError(null);
    role.setError(null);
    clear(f.alert);
    clear(created);
    if (!email.value().trim()) {
      email.setError("Enter the email of the person to invite.");
      email.input.focus();
      return;
    }
    const answer = await ctx.call(busy(submit, "Creating\u2026", () => ctx.api.invite(email.value().trim(), role.value() as Role)));
    if (!answer) return;
    if (!answer.ok) {
      const name = answer.status === 400 ? fieldFor(answer, ["email", "role"]) : null;
      const target = name === "email" ? email : name === "role" ? role : null;
      if (target) {
        target.setError(answer.message);
        target.input.focus();
      } else showFailure(ctx, f.alert, answer, () => void invite(submit));
      return;
    }
    const until = formatTime(answer.value.expiresAt).text;
    email.input.value = "";
    created.appendChild(
      secretBox(ctx, {
        id: "invitation-link",
        label: "Invitation link",
        value: answer.value.link,
        what: "Invitation link",
        warning: "No email is sent: send this link to the person yourself, privately. It works once" + (until ? ", until " + until : "") + ", and will not be shown again.",
      }),
    );
    const input = created.querySelector("input");
    if (input) (input as HTMLInputElement).focus();
    void reload();
  };

  body.appendChild(lists);
  body.appendChild(h("h2", null, "Invite a member"));
  body.appendChild(f.node);
  body.appendChild(created);
  void reload();
}
