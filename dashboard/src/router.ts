// The hash router: `#/overview`, `#/keys`, ... name a page; `#invite=<token>` carries an
// invitation (the token is read once and removed from the address bar by the app). Pure: the
// app passes `location.hash` in (tested in test/router.test.mjs).

export type PageName = "overview" | "keys" | "widget" | "orders" | "contacts" | "webhooks" | "audit" | "team";

/** The pages in the nav's order, with their titles. */
export const PAGES: { name: PageName; title: string }[] = [
  { name: "overview", title: "Overview" },
  { name: "keys", title: "API keys" },
  { name: "widget", title: "Widget" },
  { name: "orders", title: "Orders" },
  { name: "contacts", title: "Contacts" },
  { name: "webhooks", title: "Webhooks" },
  { name: "audit", title: "Audit" },
  { name: "team", title: "Team" },
];

export const DEFAULT_PAGE: PageName = "overview";

export type Route = { kind: "invite"; token: string } | { kind: "page"; page: PageName };

/**
 * The route a location hash names. An invitation is `#invite=<token>` (the token
 * percent-decoded; an empty or undecodable one is still an invitation, with token "", so the
 * page says it cannot be used rather than ignoring it). Anything else that is not a known page
 * (no hash, `#/`, `#/nope`, `#main`) is the default page. `#/keys/` and `#/keys?x` are `keys`.
 */
export function parseRoute(hash: string): Route {
  const h = hash.charAt(0) === "#" ? hash.slice(1) : hash;
  if (h.indexOf("invite=") === 0) {
    let token = "";
    try {
      token = decodeURIComponent(h.slice("invite=".length).split("&")[0]).trim();
    } catch {
      token = "";
    }
    return { kind: "invite", token };
  }
  const match = /^\/([a-z]+)\/?(?:[?#].*)?$/.exec(h);
  const name = match ? match[1] : "";
  const page = PAGES.find((p) => p.name === name);
  return { kind: "page", page: page ? page.name : DEFAULT_PAGE };
}

/** The hash of `page` (what the nav's links point at). */
export function pageHash(page: PageName): string {
  return "#/" + page;
}

/** The title of `page`. */
export function pageTitle(page: PageName): string {
  const found = PAGES.find((p) => p.name === page);
  return found ? found.title : page;
}
