// The canonical widget URL, byte-equal to the Rust core's `build_url` (core/src/widget/urls.rs)
// for options the core accepts. This only serialises: the option rules stay in the core, which
// the page asks; the page echoes the URL it applied in `ready`.

/** The default coin registry's order: the order of the `receiveAddress<Coin>` parameters. */
export const DEFAULT_COINS: readonly string[] = ["btc", "ltc", "eth", "usdc", "usdt", "dai", "sol"];
/** The default brand: the logo option is `show<Brand>Logo`. */
export const DEFAULT_BRAND = "Rampart";

/** The options the URL carries, as the script takes them (`show<Brand>Logo` under its name). */
export type UrlOptions = { [option: string]: unknown };

/** `Abc` from `abc`: the first letter ASCII upper-cased, as the core does. */
function capitalise(text: string): string {
  const first = text.charAt(0);
  return (first >= "a" && first <= "z" ? first.toUpperCase() : first) + text.slice(1);
}

/**
 * The core's one percent-encoding set: everything but RFC 3986 unreserved characters
 * (`A-Z a-z 0-9 - . _ ~`) as `%XX` of its UTF-8 bytes, upper-case hex (space is `%20`).
 * Throws `URIError` on a lone surrogate (text that is not Unicode).
 */
export function encode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}

/**
 * The canonical query (without `?`): only the options given, in the core's fixed order —
 * `publicKey`, `apiKey`, `clientName`, `tokens`, `receiveAddress<Coin>` (in `coins` order, then
 * symbols the registry does not know in the object's order), `homeScreenMessage`, `darkTheme`,
 * `currencies`, `amount`, `show<Brand>Logo`. Booleans are `true`/`false`. `environment`,
 * `targetContainerId` and anything else are never written; values of the wrong type are skipped
 * (the loader refuses them before it builds a URL).
 */
export function canonicalQuery(
  options: UrlOptions,
  brand: string = DEFAULT_BRAND,
  coins: readonly string[] = DEFAULT_COINS,
): string {
  const parts: string[] = [];
  const put = (name: string, value: unknown): void => {
    if (typeof value === "boolean") value = String(value);
    if (typeof value === "string") parts.push(encode(name) + "=" + encode(value));
  };
  const text = (name: string): void => put(name, typeof options[name] === "string" ? options[name] : undefined);
  const flag = (name: string): void => put(name, typeof options[name] === "boolean" ? options[name] : undefined);
  text("publicKey");
  text("apiKey");
  text("clientName");
  text("tokens");
  const addresses = options.receiveAddress;
  if (typeof addresses === "object" && addresses !== null && !Array.isArray(addresses)) {
    const map = addresses as { [coin: string]: unknown };
    const given = Object.keys(map);
    const known = coins.filter((coin) => given.indexOf(coin) >= 0);
    for (const coin of known.concat(given.filter((coin) => coins.indexOf(coin) < 0))) {
      if (typeof map[coin] === "string") put("receiveAddress" + capitalise(coin), map[coin]);
    }
  }
  text("homeScreenMessage");
  flag("darkTheme");
  text("currencies");
  text("amount");
  flag("show" + capitalise(brand) + "Logo");
  return parts.join("&");
}

/** The canonical URL: `root`, then `?` and the query when there is one (as the core joins them). */
export function buildUrl(
  root: string,
  options: UrlOptions,
  brand: string = DEFAULT_BRAND,
  coins: readonly string[] = DEFAULT_COINS,
): string {
  const query = canonicalQuery(options, brand, coins);
  return query ? root + "?" + query : root;
}

/**
 * The widget root from the loader's own URL: the server serves the loader at
 * `<public-url>/widget/v1/rampart.js` and the page at `<public-url>/widget/`, so the root is
 * `../` resolved against the script URL (its query and fragment dropped), with the trailing `/`.
 */
export function widgetRoot(scriptUrl: string): string {
  return new URL("../", scriptUrl).href;
}
