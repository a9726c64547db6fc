// The screen logic, pure: from the options, the partner's config, the server's check of the
// options and the widget session's state, which screens the person sees and in what order. No
// option rule lives here: which options are wrong, and the mode, are the server's answer; who
// may buy is the session's.
//
// - standard: home, then choose coin (when there is more than one), amount, receive address,
//   then the checkout: sign-in (when not signed in), the 2FA step (verify or setup, when the
//   session says so), review. Every part prefilled from the options and editable.
// - oneScreenCheckout (exactly one token, its receive address and an amount): straight to the
//   checkout (sign-in first when not signed in), the review read-only.
// - incomplete (two of the three given): only the missing part is asked, then the checkout; the
//   given parts are read-only. With the token missing, a coin other than the one the address was
//   given for also needs its address.
// - a server that takes no orders (`purchases: false`): no sign-in, the review explains it.

import type { Check, Coin, Config, Issue, SessionState } from "./api";
import { canonicalUrl, type Options } from "./query";

/** The parts the person chooses. */
export type Part = "coin" | "amount" | "address";
/** The checkout's screens before the review. */
export type Gate = "signin" | "twofactor" | "setup";
/** The recovery screens (SPEC 8.3): a recovery code in place of the authenticator's
 * (`recover`), the recovery codes shown once (`codes`), new codes for an authenticator code
 * (`newcodes`). */
export type Recovery = "recover" | "codes" | "newcodes";
/** Every screen after home. */
export type Step = Part | Gate | Recovery | "review" | "confirmation";

/** What decides the checkout: whether the server takes orders, and the session (null before
 * one is opened). */
export interface Access {
  purchases: boolean;
  session: SessionState | null;
}

/** The currencies the amount screen offers when the options fix none. */
export const CURRENCIES = ["usd", "eur", "gbp"];
/** The amount when the options give none (the core's default, the minimum). */
export const DEFAULT_AMOUNT = "5";

export interface Plan {
  /** The check's mode kind: "standard", "oneScreenCheckout" or "incomplete". */
  mode: string;
  /** Parts given by the options and not editable. */
  locked: { coin: boolean; amount: boolean; address: boolean; currency: boolean };
  /** The coin the locked address was given for ("" when none). */
  addressCoin: string;
  /** The coins the person may choose from. */
  choices: Coin[];
  /** Errors in the options the person cannot fix here (the partner must). */
  fatal: Issue[];
  /** Errors the person can fix, shown next to their field. */
  fieldIssues: Issue[];
  warnings: Issue[];
  /** Where the page opens once the check is in. */
  first: "home" | Step;
  /** Whether the server takes orders (config `purchases`; false when it does not say). */
  purchases: boolean;
}

/** What the person chose (or the options gave). */
export interface Selection {
  coin: string;
  currency: string;
  amount: string;
  addresses: { [coin: string]: string };
}

function text(options: Options, name: string): string | undefined {
  const value = options[name];
  return typeof value === "string" ? value : undefined;
}

function addressMap(options: Options): { [coin: string]: string } {
  const given = options.receiveAddress;
  const out: { [coin: string]: string } = {};
  if (typeof given === "object" && given !== null && !Array.isArray(given)) {
    const map = given as { [coin: string]: unknown };
    for (const coin of Object.keys(map)) if (typeof map[coin] === "string") out[coin] = map[coin] as string;
  }
  return out;
}

/** The coins on offer: those in `tokens` that the registry has (in `tokens` order), else all. */
export function coinChoices(options: Options, config: Config): Coin[] {
  const tokens = text(options, "tokens");
  if (tokens === undefined) return config.coins.slice();
  const out: Coin[] = [];
  for (const symbol of tokens.split(",")) {
    const coin = config.coins.filter((c) => c.symbol === symbol)[0];
    if (coin && out.indexOf(coin) < 0) out.push(coin);
  }
  return out;
}

/** The plan for these options, from the server's check of them. */
export function makePlan(options: Options, config: Config, checked: Check): Plan {
  const mode = checked.mode.kind;
  const missing = checked.mode.missing;
  const one = mode === "oneScreenCheckout";
  const incomplete = mode === "incomplete";
  const locked = {
    coin: one || (incomplete && missing !== "tokens"),
    amount: one || (incomplete && missing !== "amount"),
    address: one || (incomplete && missing !== "receiveAddress"),
    currency: false,
  };
  locked.currency = locked.amount || text(options, "currencies") !== undefined;
  const addresses = Object.keys(addressMap(options));
  const addressCoin = locked.address && addresses.length === 1 ? addresses[0] : "";
  const fixable = (issue: Issue): boolean =>
    (issue.path === "amount" && issue.code.indexOf("amount_") === 0 && !locked.amount) ||
    (issue.path.indexOf("receiveAddress.") === 0 && issue.code.indexOf("address_") === 0 && !locked.address);
  const plan: Plan = {
    mode,
    locked,
    addressCoin,
    choices: coinChoices(options, config),
    fatal: checked.errors.filter((issue) => !fixable(issue)),
    fieldIssues: checked.errors.filter(fixable),
    warnings: checked.warnings.slice(),
    first: "home",
    purchases: config.purchases === true,
  };
  if (mode !== "standard") {
    const first = steps(plan, initialSelection(options, plan))[0];
    plan.first = first === "review" ? checkoutStep({ purchases: plan.purchases, session: null }) : first;
  }
  return plan;
}

/** The starting selection: the options' values, or the first coin, usd and 5. */
export function initialSelection(options: Options, plan: Pick<Plan, "choices" | "addressCoin">): Selection {
  const tokens = text(options, "tokens");
  const addresses = addressMap(options);
  const given = Object.keys(addresses).filter((coin) => plan.choices.some((c) => c.symbol === coin));
  let coin = plan.choices.length ? plan.choices[0].symbol : "";
  if (tokens !== undefined && tokens.indexOf(",") < 0 && plan.choices.some((c) => c.symbol === tokens)) coin = tokens;
  else if (plan.addressCoin) coin = plan.addressCoin;
  else if (tokens === undefined && given.length === 1) coin = given[0];
  return {
    coin,
    currency: text(options, "currencies") || "usd",
    amount: text(options, "amount") || DEFAULT_AMOUNT,
    addresses,
  };
}

/** The parts still to choose for this selection, ending with the review. */
export function steps(plan: Pick<Plan, "locked" | "choices" | "addressCoin">, selection: Selection): (Part | "review")[] {
  const out: (Part | "review")[] = [];
  if (!plan.locked.coin && plan.choices.length > 1) out.push("coin");
  if (!plan.locked.amount) out.push("amount");
  if (!plan.locked.address || plan.addressCoin !== selection.coin) out.push("address");
  out.push("review");
  return out;
}

/** Where the checkout stands: no sign-in when the server takes no orders; else sign-in until
 * signed in, then the 2FA step the session asks for, then the review. */
export function checkoutStep(access: Access): Gate | "review" {
  if (!access.purchases) return "review";
  const session = access.session;
  if (!session || !session.signedIn) return "signin";
  if (session.twoFactor === "verify") return "twofactor";
  if (session.twoFactor === "setup") return "setup";
  return "review";
}

/** Whether the review may offer "Buy now": the server takes orders and the session may buy
 * (signed in, 2FA step done or not needed). */
export function mayBuy(access: Access): boolean {
  return access.purchases && !!access.session && access.session.signedIn && access.session.mayPurchase && checkoutStep(access) === "review";
}

/** The screen after `current` (a part, or home): the next part, or the checkout's step. */
export function nextStep(plan: Plan, selection: Selection, current: "home" | Part, access: Access): Step {
  const list = steps(plan, selection);
  const at = current === "home" ? -1 : list.indexOf(current);
  const next = list[Math.min(at + 1, list.length - 1)];
  return next === "review" ? checkoutStep(access) : next;
}

/** The screen before `current`: the previous part (from the sign-in: the last part), home in
 * standard mode, or null (nothing before; the confirmation and the recovery codes, shown once
 * after a change that is done, have no way back). The 2FA screens go back to the review (which
 * leads to them again), a recovery code to the authenticator code. */
export function previousStep(plan: Plan, selection: Selection, current: Step): Step | "home" | null {
  if (current === "confirmation" || current === "codes") return null;
  if (current === "twofactor" || current === "setup" || current === "newcodes") return "review";
  if (current === "recover") return "twofactor";
  const list = steps(plan, selection);
  const at = current === "signin" ? list.length - 1 : list.indexOf(current);
  if (at > 0) return list[at - 1] as Part;
  return plan.mode === "standard" ? "home" : null;
}

/** When purchases resume after a 2FA reset (SPEC 8.2), as a Date; null when there is no hold
 * (or the server does not say). */
export function holdUntil(session: SessionState | null): Date | null {
  const at = session && session.signedIn ? session.purchaseHoldUntil : null;
  if (typeof at !== "string" || !at) return null;
  const date = new Date(at);
  return isNaN(date.getTime()) ? null : date;
}

/** The recovery codes left when the widget should say so (SPEC 8.1: 3 or fewer, 2FA on and
 * passed in this session), else null. */
export function fewCodesLeft(session: SessionState | null): number | null {
  const left = session ? session.recoveryCodesRemaining : undefined;
  return session && session.signedIn && session.twoFactor === "passed" && typeof left === "number" && left <= 3 ? left : null;
}

/** The part an order's 400 names (`amount is not valid: ...`, `receiveAddress.btc ...`), where
 * the person changes it; null when it names none of them. */
export function orderIssuePart(message: string): Part | null {
  const path = message.split(" ")[0];
  if (path === "amount" || path === "currencies") return "amount";
  if (path === "tokens") return "coin";
  if (path.indexOf("receiveAddress") === 0) return "address";
  return null;
}

/** Errors for one field (`amount`, `receiveAddress.btc`). */
export function issuesAt(issues: readonly Issue[], path: string): Issue[] {
  return issues.filter((issue) => issue.path === path);
}

/** The options of this selection, as a one-screen checkout (one token, its address, the
 * amount), on top of the partner's other options. */
export function selectionOptions(options: Options, selection: Selection): Options {
  const out: Options = {};
  for (const key of Object.keys(options)) out[key] = options[key];
  out.tokens = selection.coin;
  out.receiveAddress = { [selection.coin]: selection.addresses[selection.coin] || "" };
  out.amount = selection.amount;
  if (text(options, "currencies") !== undefined || selection.currency !== "usd") out.currencies = selection.currency;
  return out;
}

/** The canonical URL that opens the widget on this selection (one-screen checkout). */
export function summaryUrl(root: string, options: Options, selection: Selection, config: Config): string {
  return canonicalUrl(root, selectionOptions(options, selection), config.coins.map((c) => c.symbol));
}
