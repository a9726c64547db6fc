//! Canonical custom URLs: building from validated options, and parsing back (historical forms
//! included, with warnings).

use std::borrow::Cow;
use std::fmt;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde::Serialize;
use serde_json::{Map, Value};
use url::Url;

use super::config::{WidgetConfig, push_receive_address_parameter};
use super::issue::{Issue, IssueCode, shown, suggest};
use super::validate::{Target, ValidatedOptions, Validation, validate};
use crate::vocab::Environment;

/// The longest URL [`parse_url`] accepts, in bytes.
pub const MAX_URL_BYTES: usize = 16 * 1024;

/// The one percent-encoding set: everything but RFC 3986 unreserved characters
/// (`A-Z a-z 0-9 - . _ ~`) becomes `%XX` (upper-case hex), so a space is `%20` and a comma `%2C`.
pub const QUERY_ENCODE_SET: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The historical (original brand's) name of the logo option.
pub const HISTORICAL_LOGO_OPTION: &str = "showCarbonLogo";

/// The canonical query string (without `?`) of validated options.
///
/// Only options the partner gave are written, in this fixed order: `publicKey`, `apiKey`,
/// `clientName`, `tokens`, `receiveAddress<Coin>` (one per coin, in registry order),
/// `homeScreenMessage`, `darkTheme`, `currencies`, `amount`, `show<Brand>Logo`. Values are
/// encoded with [`QUERY_ENCODE_SET`]; booleans are `true`/`false`; the amount is as validated.
/// `environment` (the root says it) and `targetContainerId` (script only) never appear.
pub fn canonical_query(options: &ValidatedOptions, config: &WidgetConfig) -> String {
    let mut query = String::with_capacity(160);
    let mut put = |name: &str, value: &str| {
        if !query.is_empty() {
            query.push('&');
        }
        query.extend(utf8_percent_encode(name, QUERY_ENCODE_SET));
        query.push('=');
        query.extend(utf8_percent_encode(value, QUERY_ENCODE_SET));
    };
    let bool_text = |b: bool| if b { "true" } else { "false" };
    if let Some(key) = &options.public_key {
        put("publicKey", key);
    }
    if let Some(key) = &options.api_key {
        put("apiKey", key);
    }
    if let Some(name) = &options.client_name {
        put("clientName", name);
    }
    if let Some(tokens) = &options.tokens {
        put("tokens", &tokens.join(","));
    }
    let mut parameter = String::with_capacity(24);
    for (symbol, address) in &options.receive_addresses {
        parameter.clear();
        push_receive_address_parameter(&mut parameter, symbol);
        put(&parameter, address);
    }
    if let Some(message) = &options.home_screen_message {
        put("homeScreenMessage", message);
    }
    if let Some(dark) = options.dark_theme {
        put("darkTheme", bool_text(dark));
    }
    if let Some(currency) = options.currency {
        put("currencies", currency.as_str());
    }
    if let Some(amount) = &options.amount {
        put("amount", amount);
    }
    if let Some(show) = options.show_logo {
        put(config.logo_option(), bool_text(show));
    }
    query
}

/// The canonical custom URL: the environment's root, `?`, and [`canonical_query`].
///
/// ```
/// use rampart_core::widget::{build_url, validate, Target, WidgetConfig};
/// use rampart_core::Environment;
///
/// let config = WidgetConfig::default();
/// let options = serde_json::json!({
///     "publicKey": "pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc",
///     "clientName": "Acme Shop",
///     "darkTheme": true
/// });
/// let validation = validate(options.as_object().unwrap(), Target::Url, Some(Environment::Sandbox), &config);
/// let url = build_url(validation.options.as_ref().unwrap(), &config);
/// assert_eq!(url, "https://widget-sandbox.rampart.network/?publicKey=pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc&clientName=Acme%20Shop&darkTheme=true");
/// ```
pub fn build_url(options: &ValidatedOptions, config: &WidgetConfig) -> String {
    let root = config.root(options.environment()).as_str();
    let query = canonical_query(options, config);
    let mut url = String::with_capacity(root.len() + 1 + query.len());
    url.push_str(root);
    if !query.is_empty() {
        url.push('?');
        url.push_str(&query);
    }
    url
}

/// A custom URL read back into options.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParsedUrl {
    /// The options in script/JSON form (`receiveAddress` as an object, booleans as booleans
    /// when they read `true` or `false`), ready for [`validate`].
    pub options: Map<String, Value>,
    /// The environment whose root the URL is on.
    #[serde(serialize_with = "serialize_environment")]
    pub environment: Environment,
    /// Historical forms, repeats and ignored parts, in URL order.
    pub warnings: Vec<Issue>,
}

fn serialize_environment<S: serde::Serializer>(env: &Environment, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(env.as_str())
}

impl ParsedUrl {
    /// [`validate`] the options for [`Target::Url`] in the root's environment, with the parse
    /// warnings first among the warnings.
    pub fn validate(&self, config: &WidgetConfig) -> Validation {
        let mut validation = validate(&self.options, Target::Url, Some(self.environment), config);
        let mut warnings = self.warnings.clone();
        warnings.append(&mut validation.warnings);
        validation.warnings = warnings;
        validation
    }
}

/// Why a URL could not be parsed at all. Each has a stable [`code`](UrlError::code) and a fixed
/// [`message`](UrlError::message).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UrlError {
    /// Longer than [`MAX_URL_BYTES`].
    TooLong,
    /// Not an absolute URL, or holds white space or control characters.
    Invalid,
    /// The part before `?` is neither configured root.
    UnknownRoot,
    /// A percent-encoded name or value is not UTF-8.
    InvalidEncoding,
}

impl UrlError {
    /// The stable snake_case code.
    pub const fn code(self) -> &'static str {
        match self {
            UrlError::TooLong => "url_too_long",
            UrlError::Invalid => "url_invalid",
            UrlError::UnknownRoot => "url_unknown_root",
            UrlError::InvalidEncoding => "url_invalid_encoding",
        }
    }

    /// A fixed English message.
    pub const fn message(self) -> &'static str {
        match self {
            UrlError::TooLong => "The URL is longer than 16384 bytes.",
            UrlError::Invalid => "The URL is not an absolute URL, or it holds spaces or control characters.",
            UrlError::UnknownRoot => "The URL is not on the production or sandbox widget root.",
            UrlError::InvalidEncoding => "A percent-encoded parameter name or value is not valid UTF-8.",
        }
    }
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for UrlError {}

/// Splits `<root>?<query>#<fragment>` and finds the root's environment.
pub(crate) fn split_url<'u>(
    input: &'u str,
    config: &WidgetConfig,
) -> Result<(Environment, &'u str, Option<&'u str>), UrlError> {
    if input.len() > MAX_URL_BYTES {
        return Err(UrlError::TooLong);
    }
    if input.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(UrlError::Invalid);
    }
    let (rest, fragment) = match input.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (input, None),
    };
    let (base, query) = rest.split_once('?').unwrap_or((rest, ""));
    let root = Url::parse(base).map_err(|_| UrlError::Invalid)?;
    let environment = config.environment_of(&root).ok_or(UrlError::UnknownRoot)?;
    Ok((environment, query, fragment))
}

/// Decodes a query name or value the way browsers' `URLSearchParams` do (`+` is a space,
/// malformed `%` sequences stay as they are), but refuses bytes that are not UTF-8.
fn decode(raw: &str) -> Result<Cow<'_, str>, UrlError> {
    let spaced: Cow<'_, str> = if raw.contains('+') { Cow::Owned(raw.replace('+', " ")) } else { Cow::Borrowed(raw) };
    let decoded = percent_decode_str(&spaced).decode_utf8().map_err(|_| UrlError::InvalidEncoding)?;
    Ok(Cow::Owned(decoded.into_owned()))
}

/// Reads a custom URL back into options.
///
/// The part before `?` must be one of the configured roots (it gives the environment). Names
/// map back to options: `receiveAddress<Coin>` into the `receiveAddress` object, `true`/`false`
/// into booleans for `darkTheme` and the logo option (anything else stays a string, so
/// validation reports it). Accepted with a warning: a coin symbol appended verbatim
/// (`receiveAddressbtc`, `receiveAddressBTC`), `tokens` given several times (joined in order),
/// `showCarbonLogo`, any other parameter given twice (the first value wins), `environment`
/// (kept, so validation checks it against the root), `timestamp`/`signature` (dropped: see
/// [`verify_signed_url`](super::verify_signed_url)), a fragment, and unknown parameters
/// (dropped, with a "did you mean").
///
/// `build_url(validate(parse_url(u)))` is the canonical form of `u`, and for validated `o`,
/// `parse_url(build_url(o)).options == o.url_options()`.
pub fn parse_url(input: &str, config: &WidgetConfig) -> Result<ParsedUrl, UrlError> {
    let (environment, query, fragment) = split_url(input, config)?;
    let mut reader = QueryReader { config, options: Map::new(), addresses: Map::new(), warnings: Vec::new() };
    let mut tokens: Option<String> = None;
    let mut signature_warned = false;
    for segment in query.split('&').filter(|s| !s.is_empty()) {
        let (name, value) = segment.split_once('=').unwrap_or((segment, ""));
        let (name, value) = (decode(name)?, decode(value)?);
        let (name, value) = (name.as_ref(), value.into_owned());
        match name {
            "clientName" | "publicKey" | "apiKey" | "homeScreenMessage" | "currencies" | "amount"
            | "targetContainerId" => reader.put(name, Value::String(value)),
            "environment" => {
                reader.warn(Issue::new(IssueCode::UrlEnvironmentParameter, "environment").with_value(&value));
                reader.put(name, Value::String(value));
            }
            "tokens" => match &mut tokens {
                None => tokens = Some(value),
                Some(joined) => {
                    if !reader.warnings.iter().any(|w| w.kind == IssueCode::UrlTokensRepeated) {
                        reader.warn(Issue::new(IssueCode::UrlTokensRepeated, "tokens").with_value(&value));
                    }
                    joined.push(',');
                    joined.push_str(&value);
                }
            },
            "darkTheme" => reader.put(name, boolean(value)),
            "timestamp" | "signature" => {
                if !signature_warned {
                    reader.warn(Issue::new(IssueCode::UrlSignatureNotVerified, name));
                    signature_warned = true;
                }
            }
            _ if name == config.logo_option() => reader.put(name, boolean(value)),
            HISTORICAL_LOGO_OPTION => {
                reader.warn(Issue::new(IssueCode::UrlHistoricalLogoOption, config.logo_option()).with_value(name));
                reader.put(config.logo_option(), boolean(value));
            }
            _ => match name.strip_prefix("receiveAddress").filter(|s| !s.is_empty()) {
                Some(suffix) => reader.receive_address(name, suffix, value),
                None => {
                    let suggestion = suggest_parameter(name, config);
                    reader.warn(Issue::new(IssueCode::UnknownOption, shown(name)).with_suggestion(suggestion));
                }
            },
        }
    }
    if let Some(tokens) = tokens {
        reader.options.insert("tokens".to_owned(), Value::String(tokens));
    }
    if fragment.is_some() {
        reader.warn(Issue::new(IssueCode::UrlFragmentIgnored, ""));
    }
    let QueryReader { mut options, addresses, warnings, .. } = reader;
    if !addresses.is_empty() {
        options.insert("receiveAddress".to_owned(), Value::Object(addresses));
    }
    Ok(ParsedUrl { options, environment, warnings })
}

fn boolean(value: String) -> Value {
    match value.as_str() {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::String(value),
    }
}

struct QueryReader<'c> {
    config: &'c WidgetConfig,
    options: Map<String, Value>,
    addresses: Map<String, Value>,
    warnings: Vec<Issue>,
}

impl QueryReader<'_> {
    fn warn(&mut self, issue: Issue) {
        self.warnings.push(issue);
    }

    /// Sets an option unless it is already set (then warns, first value wins).
    fn put(&mut self, name: &str, value: Value) {
        if self.options.contains_key(name) {
            let issue = Issue::new(IssueCode::UrlParameterRepeated, name);
            let issue = match (&value, name) {
                (Value::String(s), "publicKey" | "apiKey") => issue.with_key(s),
                (Value::String(s), _) => issue.with_value(s),
                (other, _) => issue.with_value(&other.to_string()),
            };
            self.warn(issue);
        } else {
            self.options.insert(name.to_owned(), value);
        }
    }

    fn receive_address(&mut self, name: &str, suffix: &str, value: String) {
        let config = self.config;
        let canonical = config.coins().iter().find(|c| {
            let mut expected = String::with_capacity(name.len());
            push_receive_address_parameter(&mut expected, &c.symbol);
            expected == name
        });
        let symbol = match canonical {
            Some(coin) => coin.symbol.clone(),
            None => match config.coins().iter().find(|c| c.symbol.eq_ignore_ascii_case(suffix)) {
                Some(coin) => {
                    let path = format!("receiveAddress.{}", coin.symbol);
                    self.warn(Issue::new(IssueCode::UrlHistoricalReceiveAddress, path).with_value(name));
                    coin.symbol.clone()
                }
                // Kept under its lower-cased name so validation reports the unsupported coin.
                None => suffix.to_ascii_lowercase(),
            },
        };
        if self.addresses.contains_key(&symbol) {
            let path = format!("receiveAddress.{}", shown(&symbol));
            self.warn(Issue::new(IssueCode::UrlParameterRepeated, path).with_value(&value));
        } else {
            self.addresses.insert(symbol, Value::String(value));
        }
    }
}

/// The likely intended URL parameter for an unknown one.
fn suggest_parameter(name: &str, config: &WidgetConfig) -> Option<String> {
    let receive: Vec<String> = config.coins().iter().map(|c| c.url_parameter()).collect();
    let names =
        ["clientName", "publicKey", "apiKey", "tokens", "homeScreenMessage", "darkTheme", "currencies", "amount"];
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("show") && lower.ends_with("logo") && name.len() <= 64 {
        return Some(config.logo_option().to_owned());
    }
    suggest(name, names.into_iter().chain(receive.iter().map(String::as_str)).chain([config.logo_option()]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_set_keeps_only_unreserved() {
        let all: String = (0x20u8..0x7f).map(char::from).collect();
        let encoded: String = utf8_percent_encode(&all, QUERY_ENCODE_SET).collect();
        let kept: String = encoded.split('%').flat_map(|part| part.chars().skip(2)).collect();
        assert!(kept.chars().all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c)), "{kept}");
        assert!(encoded.starts_with("%20%21%22%23"));
        assert_eq!(utf8_percent_encode("é,", QUERY_ENCODE_SET).to_string(), "%C3%A9%2C");
    }

    #[test]
    fn decoding_follows_url_search_params() {
        assert_eq!(decode("a+b%20c").as_deref(), Ok("a b c"));
        assert_eq!(decode("100%").as_deref(), Ok("100%"));
        assert_eq!(decode("%zz").as_deref(), Ok("%zz"));
        assert_eq!(decode("%FF"), Err(UrlError::InvalidEncoding));
    }
}
