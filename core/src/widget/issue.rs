//! Problems found in widget options or URLs: stable codes, fixed messages, and the
//! display rules for the offending value (truncated, keys redacted).

use std::fmt;

use serde::Serialize;

use super::address::AddressError;

/// How serious an issue is: an error makes the options unusable, a warning does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The options are refused.
    Error,
    /// The options are usable; something was ignored, deprecated or rewritten.
    Warning,
}

macro_rules! issue_codes {
    ($( $(#[$doc:meta])* $variant:ident = $code:literal, $severity:ident, $message:literal; )*) => {
        /// Every kind of issue. [`code`](IssueCode::code) is the stable snake_case name,
        /// [`message`](IssueCode::message) the fixed English text; receive-address failures
        /// carry the [`AddressError`] and use its code and message.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum IssueCode {
            $( $(#[$doc])* $variant, )*
            /// A receive address failed its chain's checks (code `address_*`).
            Address(AddressError),
        }

        impl IssueCode {
            /// Every code except the `address_*` ones (see [`AddressError::ALL`]), in table order.
            pub const LISTED: &'static [IssueCode] = &[ $( IssueCode::$variant, )* ];

            /// The stable snake_case code.
            pub fn code(self) -> &'static str {
                match self {
                    $( IssueCode::$variant => $code, )*
                    IssueCode::Address(error) => error.code(),
                }
            }

            /// Error or warning.
            pub const fn severity(self) -> Severity {
                match self {
                    $( IssueCode::$variant => Severity::$severity, )*
                    IssueCode::Address(_) => Severity::Error,
                }
            }

            /// The fixed English message; it never holds a user value.
            pub fn message(self) -> &'static str {
                match self {
                    $( IssueCode::$variant => $message, )*
                    IssueCode::Address(error) => error.message(),
                }
            }
        }
    };
}

issue_codes! {
    /// The options are not a JSON object.
    OptionsNotObject = "options_not_object", Error, "The widget options must be a JSON object.";
    /// More entries than are examined.
    TooManyOptions = "too_many_options", Error, "Too many entries: at most 64 are examined and the rest are ignored.";
    /// An option name the widget does not know.
    UnknownOption = "unknown_option", Warning, "Unknown option: it is ignored. Check the spelling and the case of the name.";
    /// A value of the wrong JSON type.
    WrongType = "wrong_type", Error, "The value has the wrong type: options are strings, except darkTheme and the logo option (true or false) and receiveAddress (an object mapping coin symbols to address strings).";
    /// A string over the size limit.
    ValueTooLong = "value_too_long", Error, "The value is longer than 4096 bytes.";
    /// A secret key inside an option other than the keys.
    SecretKeyInOption = "secret_key_in_option", Error, "The value holds a secret key (sk_...): secret keys must never appear in a page or URL. Revoke the key if it was published.";
    /// Empty `clientName`.
    ClientNameEmpty = "client_name_empty", Error, "clientName must not be empty; leave it out to use the default name.";
    /// `clientName` over 100 characters.
    ClientNameTooLong = "client_name_too_long", Error, "clientName must be at most 100 characters.";
    /// `clientName` with control characters.
    ClientNameControlCharacter = "client_name_control_character", Error, "clientName must not contain control characters.";
    /// No environment at all.
    EnvironmentRequired = "environment_required", Error, "environment is required: \"sandbox\" or \"production\".";
    /// An environment that is neither sandbox nor production.
    EnvironmentInvalid = "environment_invalid", Error, "environment must be \"sandbox\" or \"production\".";
    /// `environment` differs from the caller's (or the URL root's).
    EnvironmentMismatch = "environment_mismatch", Error, "environment does not match the environment selected by the caller or the URL root.";
    /// Neither `publicKey` nor `apiKey`.
    PublicKeyRequired = "public_key_required", Error, "publicKey is required (the publishable key, pk_<environment>_...), unless the deprecated apiKey is given.";
    /// A secret key in `publicKey`.
    PublicKeySecret = "public_key_secret", Error, "publicKey holds a secret key (sk_...): use the publishable key (pk_...) and revoke the secret key if it was published.";
    /// `publicKey` is not `pk_<environment>_<letters and digits>`.
    PublicKeyFormat = "public_key_format", Error, "publicKey must be a publishable key: pk_sandbox_ or pk_production_ followed by letters and digits.";
    /// `publicKey` is for the other environment.
    PublicKeyEnvironment = "public_key_environment", Error, "publicKey belongs to the other environment.";
    /// `apiKey` is deprecated.
    ApiKeyDeprecated = "api_key_deprecated", Warning, "apiKey is deprecated: use publicKey, the publishable key.";
    /// A secret key in `apiKey`.
    ApiKeySecret = "api_key_secret", Error, "apiKey holds a secret key (sk_...): use the publishable key in publicKey and revoke the secret key if it was published.";
    /// `apiKey` is not a hyphenated UUID.
    ApiKeyFormat = "api_key_format", Error, "apiKey must be the partner id, a hyphenated UUID.";
    /// `tokens` is empty.
    TokensEmpty = "tokens_empty", Error, "tokens must list at least one coin symbol; leave it out to offer every supported coin.";
    /// An empty item in `tokens`.
    TokensEmptyItem = "tokens_empty_item", Error, "tokens has an empty item: separate symbols with single commas, with none at either end.";
    /// White space in `tokens`.
    TokensSpace = "tokens_space", Error, "tokens must not contain spaces: separate symbols with commas only.";
    /// An upper-case symbol in `tokens`.
    TokensUppercase = "tokens_uppercase", Error, "Coin symbols in tokens must be lower case.";
    /// An unsupported symbol in `tokens`.
    TokensUnsupported = "tokens_unsupported", Error, "The coin symbol is not supported.";
    /// A symbol listed twice in `tokens`.
    TokensDuplicate = "tokens_duplicate", Error, "The coin symbol is listed more than once in tokens.";
    /// Empty `homeScreenMessage`.
    HomeScreenMessageEmpty = "home_screen_message_empty", Error, "homeScreenMessage must not be empty; leave it out to show the default tagline.";
    /// `homeScreenMessage` over 200 characters.
    HomeScreenMessageTooLong = "home_screen_message_too_long", Error, "homeScreenMessage must be at most 200 characters.";
    /// `homeScreenMessage` with control characters.
    HomeScreenMessageControlCharacter = "home_screen_message_control_character", Error, "homeScreenMessage must not contain control characters (line breaks included).";
    /// `receiveAddress` is an empty object.
    ReceiveAddressEmpty = "receive_address_empty", Error, "receiveAddress must map at least one coin symbol to an address; leave it out otherwise.";
    /// A `receiveAddress` key that is not a supported symbol.
    ReceiveAddressUnsupportedCoin = "receive_address_unsupported_coin", Error, "receiveAddress names a coin that is not supported (symbols are lower case).";
    /// A `receiveAddress` coin missing from `tokens`.
    ReceiveAddressNotInTokens = "receive_address_not_in_tokens", Error, "receiveAddress names a coin that is not in tokens.";
    /// No `targetContainerId` for the script.
    TargetContainerIdRequired = "target_container_id_required", Error, "targetContainerId is required for the script: the id of the element the widget renders into.";
    /// `targetContainerId` is not a valid HTML id.
    TargetContainerIdInvalid = "target_container_id_invalid", Error, "targetContainerId must be a valid HTML id: 1 to 128 characters without spaces or control characters.";
    /// `targetContainerId` given for a URL.
    TargetContainerIdIgnored = "target_container_id_ignored", Warning, "targetContainerId is used by the script only: a URL ignores it.";
    /// A currency other than usd, eur, gbp.
    CurrencyUnsupported = "currency_unsupported", Error, "currencies must be \"usd\", \"eur\" or \"gbp\".";
    /// `amount` given as a JSON number.
    AmountNumber = "amount_number", Error, "amount must be a string such as \"50\" or \"49.99\": JSON numbers are refused because they can lose precision.";
    /// `amount` with a sign.
    AmountSign = "amount_sign", Error, "amount must not have a sign.";
    /// `amount` with an exponent.
    AmountExponent = "amount_exponent", Error, "amount must not use an exponent: write the digits out.";
    /// `amount` with more than 2 decimals.
    AmountTooManyDecimals = "amount_too_many_decimals", Error, "amount must have at most 2 decimals.";
    /// `amount` with leading zeros.
    AmountLeadingZero = "amount_leading_zero", Error, "amount must not have leading zeros.";
    /// `amount` that is not a plain decimal.
    AmountFormat = "amount_format", Error, "amount must be a plain decimal: digits, then optionally a point and 1 or 2 digits (for example \"50\" or \"49.99\").";
    /// `amount` below the currency's minimum.
    AmountBelowMinimum = "amount_below_minimum", Error, "amount is below the minimum purchase in the chosen currency.";
    /// URL: `receiveAddress` + the symbol appended verbatim.
    UrlHistoricalReceiveAddress = "url_historical_receive_address", Warning, "Historical parameter name: the canonical name is receiveAddress followed by the coin symbol with its first letter capitalised (receiveAddressBtc).";
    /// URL: `tokens` given several times.
    UrlTokensRepeated = "url_tokens_repeated", Warning, "tokens is given more than once: the values are joined in order; give one comma-delimited value.";
    /// URL: the historical logo option.
    UrlHistoricalLogoOption = "url_historical_logo_option", Warning, "showCarbonLogo is the historical name of the logo option: use the current name.";
    /// URL: a parameter given twice.
    UrlParameterRepeated = "url_parameter_repeated", Warning, "The parameter is given more than once: the first value is used and this one is ignored.";
    /// URL: an `environment` parameter.
    UrlEnvironmentParameter = "url_environment_parameter", Warning, "environment is not a URL parameter: the root decides the environment, and the value is only checked against it.";
    /// URL: signature parameters that parsing does not check.
    UrlSignatureNotVerified = "url_signature_not_verified", Warning, "The URL carries timestamp and signature parameters, which parsing does not check: verify the signature instead.";
    /// URL: a fragment.
    UrlFragmentIgnored = "url_fragment_ignored", Warning, "The URL fragment (after #) holds no widget options and is ignored.";
}

impl fmt::Display for IssueCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// One problem: where (`path`), what (`code`, `message`), the offending `value` as it may be
/// shown, and a `suggestion` when one is likely.
///
/// Serialised with camelCase keys: `{"code","path","message","value","suggestion"}`, absent
/// values as `null`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Issue {
    /// The kind, for matching in Rust.
    #[serde(skip)]
    pub kind: IssueCode,
    /// The stable snake_case code (`kind.code()`).
    pub code: &'static str,
    /// The option path: `amount`, `receiveAddress.btc`, `tokens[1]`; empty for the whole input.
    pub path: String,
    /// The fixed English message (`kind.message()`).
    pub message: &'static str,
    /// The offending value, at most [`MAX_SHOWN_CHARS`] characters and `…` when cut; keys are
    /// shown as their prefix only (`sk_sandbox_…`), as they are in `path`.
    pub value: Option<String>,
    /// A likely intended value or option name.
    pub suggestion: Option<String>,
}

/// The most characters of a value or key an issue shows.
pub const MAX_SHOWN_CHARS: usize = 100;

impl Issue {
    /// An issue at `path` without a value.
    pub fn new(kind: IssueCode, path: impl Into<String>) -> Issue {
        Issue { kind, code: kind.code(), path: path.into(), message: kind.message(), value: None, suggestion: None }
    }

    /// Error or warning.
    pub fn severity(&self) -> Severity {
        self.kind.severity()
    }

    /// Shows `value`, truncated, with any secret key in it redacted.
    pub(crate) fn with_value(mut self, value: &str) -> Issue {
        self.value = Some(shown(value));
        self
    }

    /// Shows a key: its `pk_<env>_` / `sk_<env>_` prefix only.
    pub(crate) fn with_key(mut self, value: &str) -> Issue {
        self.value = Some(redact_key(value));
        self
    }

    pub(crate) fn with_suggestion(mut self, suggestion: Option<String>) -> Issue {
        self.suggestion = suggestion;
        self
    }
}

const SECRET_MARKERS: [&str; 2] = ["sk_sandbox_", "sk_production_"];

/// True when `text` holds something shaped like a secret key.
pub(crate) fn contains_secret_key(text: &str) -> bool {
    SECRET_MARKERS.iter().any(|m| text.contains(m))
}

/// A value (or an option name in a path) as an issue may show it: a secret key anywhere makes
/// it redacted from the key on, and long values are cut, so the result is at most
/// [`MAX_SHOWN_CHARS`] characters and `…`.
pub(crate) fn shown(value: &str) -> String {
    if let Some(at) = SECRET_MARKERS.iter().filter_map(|m| value.find(m)).min() {
        let head = value.get(..at).unwrap_or_default();
        let redacted = redact_key(value.get(at..).unwrap_or_default());
        // The key's redacted prefix fits after the head, or the key lies past what is shown.
        if head.chars().count() + redacted.chars().count() > MAX_SHOWN_CHARS {
            let cut = head.char_indices().nth(MAX_SHOWN_CHARS).map_or(head.len(), |(at, _)| at);
            return format!("{}…", head.get(..cut).unwrap_or_default());
        }
        return format!("{head}{redacted}");
    }
    truncate(value)
}

/// At most [`MAX_SHOWN_CHARS`] characters, with `…` when cut.
pub(crate) fn truncate(value: &str) -> String {
    match value.char_indices().nth(MAX_SHOWN_CHARS) {
        Some((at, _)) => format!("{}…", value.get(..at).unwrap_or_default()),
        None => value.to_owned(),
    }
}

/// A key shown by its prefix: `sk_sandbox_…`, `pk_production_…`, `sk_…`; anything else by
/// its first 4 characters when it is longer than 8, else only `…`.
pub(crate) fn redact_key(key: &str) -> String {
    for kind in ["sk_", "pk_"] {
        if key.starts_with(kind) {
            for env in ["sandbox_", "production_"] {
                if key.get(kind.len()..).is_some_and(|rest| rest.starts_with(env)) {
                    return format!("{kind}{env}…");
                }
            }
            return format!("{kind}…");
        }
    }
    match key.char_indices().nth(4) {
        Some((at, _)) if key.chars().count() > 8 => format!("{}…", key.get(..at).unwrap_or_default()),
        _ => "…".to_owned(),
    }
}

/// Names longer than this get no suggestion (keeps the distance computation cheap).
const MAX_SUGGEST_INPUT: usize = 64;

/// The candidate `input` most likely meant: equal ignoring case, `_` and `-`; or the nearest by
/// edit distance (transpositions count 1) within a third of the candidate's length (1 to 3).
/// Ties go to the earlier candidate.
pub(crate) fn suggest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    if input.is_empty() || input.len() > MAX_SUGGEST_INPUT {
        return None;
    }
    let squashed: String = input.chars().filter(|c| *c != '_' && *c != '-').map(|c| c.to_ascii_lowercase()).collect();
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let lower = candidate.to_ascii_lowercase();
        if lower == squashed {
            return Some(candidate.to_owned());
        }
        let distance = osa_distance(squashed.as_bytes(), lower.as_bytes());
        let allowed = (candidate.len() / 3).clamp(1, 3);
        if distance <= allowed && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c.to_owned())
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent
/// transpositions each cost 1.
fn osa_distance(a: &[u8], b: &[u8]) -> usize {
    let width = b.len() + 1;
    // Three rolling rows: two back for transpositions.
    let mut before: Vec<usize> = vec![0; width];
    let mut previous: Vec<usize> = (0..width).collect();
    let mut current: Vec<usize> = vec![0; width];
    for (i, &ca) in a.iter().enumerate() {
        if let Some(first) = current.first_mut() {
            *first = i + 1;
        }
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let deletion = previous.get(j + 1).copied().unwrap_or(usize::MAX).saturating_add(1);
            let insertion = current.get(j).copied().unwrap_or(usize::MAX).saturating_add(1);
            let substitution = previous.get(j).copied().unwrap_or(usize::MAX).saturating_add(cost);
            let mut value = deletion.min(insertion).min(substitution);
            let swapped = i > 0 && j > 0 && a.get(i - 1) == Some(&cb) && b.get(j - 1) == Some(&ca);
            if swapped {
                value = value.min(before.get(j - 1).copied().unwrap_or(usize::MAX).saturating_add(1));
            }
            if let Some(slot) = current.get_mut(j + 1) {
                *slot = value;
            }
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_messages_fixed() {
        let mut codes: Vec<&str> = IssueCode::LISTED.iter().map(|c| c.code()).collect();
        codes.extend(AddressError::ALL.iter().map(|e| IssueCode::Address(*e).code()));
        let n = codes.len();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), n);
        for code in IssueCode::LISTED {
            assert!(code.code().bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{code}");
            assert!(code.message().ends_with('.'), "{code}");
        }
    }

    #[test]
    fn redaction() {
        assert_eq!(redact_key("sk_sandbox_abcdef"), "sk_sandbox_…");
        assert_eq!(redact_key("pk_production_abc"), "pk_production_…");
        assert_eq!(redact_key("sk_live_abc"), "sk_…");
        assert_eq!(redact_key("6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11"), "6f1c…");
        assert_eq!(redact_key("short"), "…");
        assert_eq!(shown("My sk_production_abc shop"), "My sk_production_…");
        assert_eq!(shown(&"é".repeat(150)), format!("{}…", "é".repeat(100)));
        // At most 100 characters and the ellipsis, wherever the key is.
        let late_key = format!("{}sk_production_SECRET", "x".repeat(95));
        assert_eq!(shown(&late_key), format!("{}…", "x".repeat(95)));
        let fits = format!("{}sk_sandbox_SECRET", "x".repeat(88));
        assert_eq!(shown(&fits), format!("{}sk_sandbox_…", "x".repeat(88)));
        for n in 0..120 {
            let text = format!("{}sk_production_SECRET", "y".repeat(n));
            assert!(shown(&text).chars().count() <= MAX_SHOWN_CHARS + 1 && !shown(&text).contains("SECRET"));
        }
    }

    #[test]
    fn suggestions() {
        let names = ["clientName", "darkTheme", "currencies", "tokens", "amount"];
        assert_eq!(suggest("darktheme", names).as_deref(), Some("darkTheme"));
        assert_eq!(suggest("dark_theme", names).as_deref(), Some("darkTheme"));
        assert_eq!(suggest("currency", names).as_deref(), Some("currencies"));
        assert_eq!(suggest("token", names).as_deref(), Some("tokens"));
        assert_eq!(suggest("amuont", names).as_deref(), Some("amount"));
        assert_eq!(suggest("colour", names), None);
        assert_eq!(osa_distance(b"bct", b"btc"), 1);
        assert_eq!(osa_distance(b"", b"abc"), 3);
        assert_eq!(osa_distance(b"abc", b""), 3);
    }
}
