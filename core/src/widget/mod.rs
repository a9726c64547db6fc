//! The embeddable purchase widget (SPEC section 4): options, validation, canonical and signed
//! URLs, snippets, and receive-address checks.
//!
//! Options arrive as a JSON object, the form every surface has (a C JSON string, a Python dict,
//! a Node object, an HTTP body); Rust callers may build it with [`WidgetOptions`]. [`validate`]
//! reports every problem at once and, when there is no error, gives [`ValidatedOptions`], from
//! which the URL ([`build_url`]), a signed URL ([`sign_url`]) and the snippets
//! ([`script_snippet`], [`iframe_snippet`]) are made.
//!
//! ```
//! use rampart_core::widget::{build_url, validate, CheckoutPart, Mode, Target, WidgetConfig};
//! use rampart_core::Environment;
//!
//! let config = WidgetConfig::default();
//! let options = serde_json::json!({
//!     "environment": "production",
//!     "publicKey": "pk_production_4eC39HqLyjWDarjtT1zdp7dc",
//!     "tokens": "btc",
//!     "receiveAddress": {"btc": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"},
//!     "amount": "50",
//!     "darktheme": true
//! });
//! let validation = validate(options.as_object().unwrap(), Target::Url, None, &config);
//! assert_eq!(validation.mode, Mode::OneScreenCheckout);
//! assert_eq!(validation.warnings[0].code, "unknown_option");
//! assert_eq!(validation.warnings[0].suggestion.as_deref(), Some("darkTheme"));
//! let url = build_url(validation.options.as_ref().unwrap(), &config);
//! assert_eq!(
//!     url,
//!     "https://widget.rampart.network/?publicKey=pk_production_4eC39HqLyjWDarjtT1zdp7dc&tokens=btc\
//!      &receiveAddressBtc=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq&amount=50"
//! );
//!
//! // Two of the three one-screen parts: the mode names the missing one.
//! let options = serde_json::json!({"environment": "sandbox", "publicKey": "pk_sandbox_x1", "tokens": "eth", "amount": "20"});
//! let validation = validate(options.as_object().unwrap(), Target::Url, None, &config);
//! assert_eq!(validation.mode, Mode::Incomplete { missing: CheckoutPart::ReceiveAddress });
//! ```
//!
//! # Choices the specification leaves open
//!
//! - **Environment.** From the `environment` option, else the caller's hint (the server's
//!   environment, or the root of a parsed URL), else the publishable key's prefix
//!   (`pk_sandbox_...`); an option and a hint must agree, and a key of the other environment is
//!   an error. The script and a URL follow the same rule.
//! - **Amount.** A string of digits with an optional point and 1 or 2 decimals; leading zeros
//!   (`"05"`) are refused so the URL carries exactly what was validated. JSON numbers are refused
//!   with `amount_number` (a float cannot be trusted to keep `49.99`). The minimum is checked in
//!   the chosen currency; without a valid currency it is not checked. The default amount is the
//!   currency's minimum (5).
//! - **Defaults** (client name, tagline, every coin, usd, dark theme off, logo off) apply in the
//!   accessors of [`ValidatedOptions`] but are never written into URLs or the render call.
//! - **Keys in issues.** `publicKey` and `apiKey` values are shown only as their prefix
//!   (`pk_sandbox_…`, `6f1c…`), and a secret key found in any option is redacted the same way.
//! - **Mode.** Presence counts, validity does not: exactly one coin in `tokens`, a
//!   `receiveAddress` with one entry (for that coin, when `tokens` has one), and an `amount`.
//!
//! # Issue codes
//!
//! Paths name the option (`amount`), an entry (`receiveAddress.btc`) or an item of `tokens`
//! (`tokens[1]`, counted from 0 over the comma-separated items); an empty path is the whole
//! input. An issue shows the offending value (at most 100 characters; keys redacted) and, for
//! names and symbols, a `suggestion`.
//!
//! | code | path | severity | message |
//! |---|---|---|---|
//! | `options_not_object` | (empty) | error | The widget options must be a JSON object. |
//! | `too_many_options` | (empty), `receiveAddress` | error | Too many entries: at most 64 are examined and the rest are ignored. |
//! | `unknown_option` | the name | warning | Unknown option: it is ignored. Check the spelling and the case of the name. |
//! | `wrong_type` | any option, `receiveAddress.<coin>` | error | The value has the wrong type: options are strings, except darkTheme and the logo option (true or false) and receiveAddress (an object mapping coin symbols to address strings). |
//! | `value_too_long` | any string option | error | The value is longer than 4096 bytes. |
//! | `secret_key_in_option` | any string option but the keys | error | The value holds a secret key (sk_...): secret keys must never appear in a page or URL. Revoke the key if it was published. |
//! | `client_name_empty` | `clientName` | error | clientName must not be empty; leave it out to use the default name. |
//! | `client_name_too_long` | `clientName` | error | clientName must be at most 100 characters. |
//! | `client_name_control_character` | `clientName` | error | clientName must not contain control characters. |
//! | `environment_required` | `environment` | error | environment is required: "sandbox" or "production". |
//! | `environment_invalid` | `environment` | error | environment must be "sandbox" or "production". |
//! | `environment_mismatch` | `environment` | error | environment does not match the environment selected by the caller or the URL root. |
//! | `public_key_required` | `publicKey` | error | publicKey is required (the publishable key, `pk_<environment>_...`), unless the deprecated apiKey is given. |
//! | `public_key_secret` | `publicKey` | error | publicKey holds a secret key (sk_...): use the publishable key (pk_...) and revoke the secret key if it was published. |
//! | `public_key_format` | `publicKey` | error | publicKey must be a publishable key: pk_sandbox_ or pk_production_ followed by letters and digits. |
//! | `public_key_environment` | `publicKey` | error | publicKey belongs to the other environment. |
//! | `api_key_deprecated` | `apiKey` | warning | apiKey is deprecated: use publicKey, the publishable key. |
//! | `api_key_secret` | `apiKey` | error | apiKey holds a secret key (sk_...): use the publishable key in publicKey and revoke the secret key if it was published. |
//! | `api_key_format` | `apiKey` | error | apiKey must be the partner id, a hyphenated UUID. |
//! | `tokens_empty` | `tokens` | error | tokens must list at least one coin symbol; leave it out to offer every supported coin. |
//! | `tokens_empty_item` | `tokens[i]` | error | tokens has an empty item: separate symbols with single commas, with none at either end. |
//! | `tokens_space` | `tokens[i]` | error | tokens must not contain spaces: separate symbols with commas only. |
//! | `tokens_uppercase` | `tokens[i]` | error | Coin symbols in tokens must be lower case. |
//! | `tokens_unsupported` | `tokens[i]` | error | The coin symbol is not supported. |
//! | `tokens_duplicate` | `tokens[i]` | error | The coin symbol is listed more than once in tokens. |
//! | `home_screen_message_empty` | `homeScreenMessage` | error | homeScreenMessage must not be empty; leave it out to show the default tagline. |
//! | `home_screen_message_too_long` | `homeScreenMessage` | error | homeScreenMessage must be at most 200 characters. |
//! | `home_screen_message_control_character` | `homeScreenMessage` | error | homeScreenMessage must not contain control characters (line breaks included). |
//! | `receive_address_empty` | `receiveAddress` | error | receiveAddress must map at least one coin symbol to an address; leave it out otherwise. |
//! | `receive_address_unsupported_coin` | `receiveAddress.<key>` | error | receiveAddress names a coin that is not supported (symbols are lower case). |
//! | `receive_address_not_in_tokens` | `receiveAddress.<coin>` | error | receiveAddress names a coin that is not in tokens. |
//! | `address_*` | `receiveAddress.<coin>` | error | the [`address::AddressError`] code and message: the check that failed |
//! | `target_container_id_required` | `targetContainerId` | error | targetContainerId is required for the script: the id of the element the widget renders into. |
//! | `target_container_id_invalid` | `targetContainerId` | error | targetContainerId must be a valid HTML id: 1 to 128 characters without spaces or control characters. |
//! | `target_container_id_ignored` | `targetContainerId` | warning | targetContainerId is used by the script only: a URL ignores it. |
//! | `currency_unsupported` | `currencies` | error | currencies must be "usd", "eur" or "gbp". |
//! | `amount_number` | `amount` | error | amount must be a string such as "50" or "49.99": JSON numbers are refused because they can lose precision. |
//! | `amount_sign` | `amount` | error | amount must not have a sign. |
//! | `amount_exponent` | `amount` | error | amount must not use an exponent: write the digits out. |
//! | `amount_too_many_decimals` | `amount` | error | amount must have at most 2 decimals. |
//! | `amount_leading_zero` | `amount` | error | amount must not have leading zeros. |
//! | `amount_format` | `amount` | error | amount must be a plain decimal: digits, then optionally a point and 1 or 2 digits (for example "50" or "49.99"). |
//! | `amount_below_minimum` | `amount` | error | amount is below the minimum purchase in the chosen currency. |
//!
//! Parsing a URL ([`parse_url`]) adds these warnings (and reports unknown parameters as
//! `unknown_option`):
//!
//! | code | path | severity | message |
//! |---|---|---|---|
//! | `url_historical_receive_address` | `receiveAddress.<coin>` | warning | Historical parameter name: the canonical name is receiveAddress followed by the coin symbol with its first letter capitalised (receiveAddressBtc). |
//! | `url_tokens_repeated` | `tokens` | warning | tokens is given more than once: the values are joined in order; give one comma-delimited value. |
//! | `url_historical_logo_option` | `show<Brand>Logo` | warning | showCarbonLogo is the historical name of the logo option: use the current name. |
//! | `url_parameter_repeated` | the option | warning | The parameter is given more than once: the first value is used and this one is ignored. |
//! | `url_environment_parameter` | `environment` | warning | environment is not a URL parameter: the root decides the environment, and the value is only checked against it. |
//! | `url_signature_not_verified` | `timestamp` or `signature` | warning | The URL carries timestamp and signature parameters, which parsing does not check: verify the signature instead. |
//! | `url_fragment_ignored` | (empty) | warning | The URL fragment (after #) holds no widget options and is ignored. |
//!
//! Whole-call failures have their own codes: [`UrlError`] (`url_too_long`, `url_invalid`,
//! `url_unknown_root`, `url_invalid_encoding`), [`SignatureError`] (`signature_key_invalid`,
//! `signature_key_environment`, `signature_missing`, `signature_malformed`,
//! `signature_mismatch`, `signature_expired`, `signature_from_future`), [`SnippetError`] and
//! [`ConfigError`].
//!
//! Nothing here panics on any input, and input sizes are bounded: string values at
//! [`MAX_VALUE_BYTES`], options and `receiveAddress` entries at [`MAX_OPTIONS`], URLs at
//! [`MAX_URL_BYTES`].

pub mod address;
mod config;
mod issue;
mod options;
pub mod origins;
mod sign;
mod snippet;
mod urls;
mod validate;

pub(crate) use validate::parse_amount;

pub use config::{
    Coin, CoinRegistry, ConfigError, Currency, DEFAULT_BRAND, DEFAULT_CLIENT_NAME, DEFAULT_HOME_SCREEN_MESSAGE,
    DEFAULT_MINIMUM_MINOR_UNITS, DEFAULT_PRODUCTION_ROOT, DEFAULT_SANDBOX_ROOT, MAX_BRAND_LEN, MAX_CLIENT_NAME_CHARS,
    MAX_COINS, MAX_HOME_SCREEN_MESSAGE_CHARS, WidgetConfig,
};
pub use issue::{Issue, IssueCode, MAX_SHOWN_CHARS, Severity};
pub use options::{OptionName, WidgetOptions};
pub use sign::{MAX_CLOCK_SKEW_SECS, SignatureError, sign_url, verify_signed_url, verify_signed_url_with_key_hash};
pub use snippet::{
    CspDirectives, IFRAME_ALLOW, IFRAME_REFERRER_POLICY, IframeOptions, SDK_FILE, SnippetError, csp_directives,
    escape_html, iframe_snippet, render_options_json, script_safe_json, script_snippet, script_snippet_with_nonce,
    sdk_url,
};
pub use urls::{
    HISTORICAL_LOGO_OPTION, MAX_URL_BYTES, ParsedUrl, QUERY_ENCODE_SET, UrlError, build_url, canonical_query, parse_url,
};
pub use validate::{
    CheckoutPart, MAX_CONTAINER_ID_CHARS, MAX_OPTIONS, MAX_VALUE_BYTES, Mode, Target, ValidatedOptions, Validation,
    validate, validate_value,
};
