// The widget options from the page's query string, read the way the core's `parse_url`
// (core/src/widget/urls.rs) reads them, so the page sends the server the same options the core
// would see: names map back to options, `receiveAddress<Coin>` into the `receiveAddress` object,
// `true`/`false` into booleans for darkTheme and the logo option (anything else stays a string so
// the server's check reports it), `tokens` given several times joined in order, any other
// parameter given twice keeps its first value, `showCarbonLogo` read as the logo option, and
// `timestamp`/`signature` and unknown parameters dropped. No rule is checked here: the server's
// `POST /v1/widget/check` is the one validator.

import { buildUrl, DEFAULT_BRAND } from "../url";

/** Options in script form (`receiveAddress` an object), as `POST /v1/widget/check` takes them. */
export type Options = { [option: string]: unknown };

/** The historical logo option, read as the current one. */
const HISTORICAL_LOGO_OPTION = "showCarbonLogo";
const TEXT = ["clientName", "publicKey", "apiKey", "homeScreenMessage", "currencies", "amount", "targetContainerId", "environment"];

/** A query name or value decoded as `URLSearchParams` does (`+` is a space, malformed `%` stays),
 * but throwing `URIError` on bytes that are not UTF-8, as the core refuses them. */
export function decodeComponent(raw: string): string {
  return raw.replace(/\+/g, " ").replace(/(%[0-9A-Fa-f]{2})+/g, (run) => decodeURIComponent(run));
}

function flag(value: string): boolean | string {
  return value === "true" ? true : value === "false" ? false : value;
}

/** The options in `search` (with or without its `?`; a fragment is ignored). Throws `URIError`
 * when a parameter is not UTF-8. */
export function parseQuery(search: string, brand: string = DEFAULT_BRAND): Options {
  const logo = "show" + brand.charAt(0).toUpperCase() + brand.slice(1) + "Logo";
  const options: Options = {};
  const addresses: { [coin: string]: string } = {};
  let tokens: string | undefined;
  let anyAddress = false;
  const put = (name: string, value: unknown): void => {
    if (!Object.prototype.hasOwnProperty.call(options, name)) options[name] = value;
  };
  const query = search.split("#")[0].replace(/^\?/, "");
  for (const segment of query.split("&")) {
    if (!segment) continue;
    const at = segment.indexOf("=");
    const name = decodeComponent(at < 0 ? segment : segment.slice(0, at));
    const value = decodeComponent(at < 0 ? "" : segment.slice(at + 1));
    if (TEXT.indexOf(name) >= 0) put(name, value);
    else if (name === "tokens") tokens = tokens === undefined ? value : tokens + "," + value;
    else if (name === "darkTheme" || name === logo) put(name, flag(value));
    else if (name === HISTORICAL_LOGO_OPTION) put(logo, flag(value));
    else if (name.indexOf("receiveAddress") === 0 && name.length > "receiveAddress".length) {
      // receiveAddressBtc, and the historical receiveAddressbtc / receiveAddressBTC: coin
      // symbols are lower case, so the lower-cased suffix is the symbol in every form.
      const coin = name.slice("receiveAddress".length).toLowerCase();
      if (!Object.prototype.hasOwnProperty.call(addresses, coin)) addresses[coin] = value;
      anyAddress = true;
    }
    // timestamp, signature and unknown parameters: dropped, as parse_url drops them.
  }
  if (tokens !== undefined) options.tokens = tokens;
  if (anyAddress) options.receiveAddress = addresses;
  return options;
}

/** The canonical URL of `options` on the page's own root (`origin` + `pathname`), in the
 * order of `coins` (the server's registry): what the page applied, echoed in `ready`. */
export function canonicalUrl(root: string, options: Options, coins?: readonly string[]): string {
  return coins ? buildUrl(root, options, DEFAULT_BRAND, coins) : buildUrl(root, options);
}
