//! Option validation: every problem at once, the checkout mode, and the typed result.

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use super::address::validate_address;
use super::config::{Currency, MAX_CLIENT_NAME_CHARS, MAX_HOME_SCREEN_MESSAGE_CHARS, WidgetConfig};
use super::issue::{Issue, IssueCode, Severity, contains_secret_key, shown, suggest};
use super::options::OptionName;
use crate::vocab::Environment;

/// The longest string value of any option, in bytes.
pub const MAX_VALUE_BYTES: usize = 4096;
/// The most options (and `receiveAddress` entries) examined.
pub const MAX_OPTIONS: usize = 64;
/// The longest `targetContainerId`, in characters.
pub const MAX_CONTAINER_ID_CHARS: usize = 128;
/// The longest key body after `pk_<environment>_`.
const MAX_KEY_BODY: usize = 128;

/// What the options are for: the script (`Rampart.render`) or a custom URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// The script snippet: `environment` and `targetContainerId` are required.
    Script,
    /// A custom URL: the root (or the caller) gives the environment; `targetContainerId` is ignored.
    Url,
}

/// One of the three parts of a one-screen checkout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CheckoutPart {
    /// Exactly one coin in `tokens`. Serialised as `"tokens"`.
    #[serde(rename = "tokens")]
    Token,
    /// A receive address for that coin. Serialised as `"receiveAddress"`.
    #[serde(rename = "receiveAddress")]
    ReceiveAddress,
    /// An `amount`. Serialised as `"amount"`.
    #[serde(rename = "amount")]
    Amount,
}

/// Which widget flow the options give.
///
/// Serialised as `{"kind":"standard"}`, `{"kind":"oneScreenCheckout"}` or
/// `{"kind":"incomplete","missing":"tokens"|"receiveAddress"|"amount"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Mode {
    /// The full widget.
    Standard,
    /// Exactly one token, a receive address for it and an amount: the widget opens on payment.
    OneScreenCheckout,
    /// Two of the three one-screen parts are given; this one is missing.
    Incomplete {
        /// The missing part.
        missing: CheckoutPart,
    },
}

/// The outcome of [`validate`]: every error and warning, the mode, and the typed options when
/// there is no error.
///
/// Serialised as `{"errors":[...],"warnings":[...],"mode":{...},"options":{...}|null}`.
#[derive(Clone, Debug, Serialize)]
pub struct Validation {
    /// Problems that make the options unusable.
    pub errors: Vec<Issue>,
    /// Problems that do not (ignored, deprecated, historical).
    pub warnings: Vec<Issue>,
    /// The flow the options give; reported even when there are errors.
    pub mode: Mode,
    /// The validated options; present exactly when `errors` is empty.
    pub options: Option<ValidatedOptions>,
}

impl Validation {
    /// No errors.
    pub fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Options that passed [`validate`]: typed, with defaults applied in the accessors, and a record
/// of what the partner gave (only that is written into URLs and snippets).
///
/// Only [`validate`] makes one, so every URL, signature or snippet built from it starts from
/// checked input. Serialises as [`ValidatedOptions::to_json`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidatedOptions {
    pub(crate) target: Target,
    pub(crate) environment: Environment,
    pub(crate) mode: Mode,
    pub(crate) client_name: Option<String>,
    pub(crate) public_key: Option<String>,
    pub(crate) api_key: Option<String>,
    pub(crate) tokens: Option<Vec<String>>,
    pub(crate) home_screen_message: Option<String>,
    /// In registry order.
    pub(crate) receive_addresses: Vec<(String, String)>,
    pub(crate) target_container_id: Option<String>,
    pub(crate) dark_theme: Option<bool>,
    pub(crate) currency: Option<Currency>,
    pub(crate) amount: Option<String>,
    pub(crate) show_logo: Option<bool>,
    defaults: Defaults,
}

/// Copies of the configuration's defaults, so the accessors need no configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Defaults {
    client_name: String,
    home_screen_message: String,
    tokens: Vec<String>,
    amount: String,
    logo_option: String,
}

impl ValidatedOptions {
    /// What the options were validated for.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The environment (from the option, the caller's hint or the URL root).
    pub fn environment(&self) -> Environment {
        self.environment
    }

    /// The checkout mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// `clientName`, or the configured default.
    pub fn client_name(&self) -> &str {
        self.client_name.as_deref().unwrap_or(&self.defaults.client_name)
    }

    /// `publicKey`, if given.
    pub fn public_key(&self) -> Option<&str> {
        self.public_key.as_deref()
    }

    /// `apiKey`, if given (deprecated).
    pub fn api_key(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    /// The coins offered: `tokens` in the given order, or every supported coin.
    pub fn tokens(&self) -> &[String] {
        self.tokens.as_deref().unwrap_or(&self.defaults.tokens)
    }

    /// `homeScreenMessage`, or the configured tagline.
    pub fn home_screen_message(&self) -> &str {
        self.home_screen_message.as_deref().unwrap_or(&self.defaults.home_screen_message)
    }

    /// The receive addresses as (symbol, address), in registry order.
    pub fn receive_addresses(&self) -> &[(String, String)] {
        &self.receive_addresses
    }

    /// The receive address for a coin symbol.
    pub fn receive_address(&self, symbol: &str) -> Option<&str> {
        self.receive_addresses.iter().find(|(s, _)| s == symbol).map(|(_, a)| a.as_str())
    }

    /// `targetContainerId` (script target only).
    pub fn target_container_id(&self) -> Option<&str> {
        self.target_container_id.as_deref()
    }

    /// `darkTheme`, default false.
    pub fn dark_theme(&self) -> bool {
        self.dark_theme.unwrap_or(false)
    }

    /// `currencies`, default usd.
    pub fn currency(&self) -> Currency {
        self.currency.unwrap_or(Currency::Usd)
    }

    /// `amount` exactly as given, or the chosen currency's minimum (`"5"` by default).
    pub fn amount(&self) -> &str {
        self.amount.as_deref().unwrap_or(&self.defaults.amount)
    }

    /// `show<Brand>Logo`, default false (the generic "Buy crypto" header).
    pub fn show_logo(&self) -> bool {
        self.show_logo.unwrap_or(false)
    }

    /// Whether the partner gave this option (only given options are written out).
    pub fn is_given(&self, option: OptionName) -> bool {
        match option {
            OptionName::ClientName => self.client_name.is_some(),
            OptionName::Environment => true,
            OptionName::PublicKey => self.public_key.is_some(),
            OptionName::ApiKey => self.api_key.is_some(),
            OptionName::Tokens => self.tokens.is_some(),
            OptionName::HomeScreenMessage => self.home_screen_message.is_some(),
            OptionName::ReceiveAddress => !self.receive_addresses.is_empty(),
            OptionName::TargetContainerId => self.target_container_id.is_some(),
            OptionName::DarkTheme => self.dark_theme.is_some(),
            OptionName::Currencies => self.currency.is_some(),
            OptionName::Amount => self.amount.is_some(),
            OptionName::ShowLogo => self.show_logo.is_some(),
        }
    }

    /// The given options in script form, plus the resolved `environment`: the object the
    /// script's render call receives.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut map = self.url_options();
        map.insert("environment".to_owned(), Value::from(self.environment.as_str()));
        if let Some(id) = &self.target_container_id {
            map.insert("targetContainerId".to_owned(), Value::from(id.as_str()));
        }
        map
    }

    /// The given options a URL carries, in script form: what [`parse_url`](super::parse_url)
    /// returns for [`build_url`](super::build_url)'s output.
    pub fn url_options(&self) -> Map<String, Value> {
        let mut map = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                map.insert(key.to_owned(), value);
            }
        };
        put("clientName", self.client_name.as_deref().map(Value::from));
        put("publicKey", self.public_key.as_deref().map(Value::from));
        put("apiKey", self.api_key.as_deref().map(Value::from));
        put("tokens", self.tokens.as_ref().map(|t| Value::from(t.join(","))));
        put("homeScreenMessage", self.home_screen_message.as_deref().map(Value::from));
        let addresses = (!self.receive_addresses.is_empty()).then(|| {
            Value::Object(self.receive_addresses.iter().map(|(c, a)| (c.clone(), Value::from(a.as_str()))).collect())
        });
        put("receiveAddress", addresses);
        put("darkTheme", self.dark_theme.map(Value::Bool));
        put("currencies", self.currency.map(|c| Value::from(c.as_str())));
        put("amount", self.amount.as_deref().map(Value::from));
        put(&self.defaults.logo_option, self.show_logo.map(Value::Bool));
        map
    }
}

impl Serialize for ValidatedOptions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let json = self.to_json();
        let mut map = serializer.serialize_map(Some(json.len()))?;
        for (key, value) in &json {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Validates widget options given as a JSON object, reporting every problem at once.
///
/// `target` says what they are for; `env_hint` is the environment the caller already knows
/// (the server's, or a URL root's):
///
/// - The environment comes from the `environment` option, else the caller's hint, else the
///   prefix of a publishable key (`pk_sandbox_...`); an option and a hint that differ are
///   `environment_mismatch`, a key of the other environment `public_key_environment`, and none
///   of the three `environment_required`. The script and a URL follow the same rule.
///
/// Issues come in option-table order (`clientName`, `environment`, `publicKey`, `apiKey`,
/// `tokens`, `homeScreenMessage`, `receiveAddress` entries in registry order then unsupported
/// coins by name, `targetContainerId`, `darkTheme`, `currencies`, `amount`, the logo option),
/// then unknown options by name. See the module documentation for every code.
pub fn validate(
    options: &Map<String, Value>,
    target: Target,
    env_hint: Option<Environment>,
    config: &WidgetConfig,
) -> Validation {
    Validator { options, target, config, errors: Vec::new(), warnings: Vec::new() }.run(env_hint)
}

/// [`validate`] for any JSON value: anything but an object is `options_not_object`.
pub fn validate_value(
    options: &Value,
    target: Target,
    env_hint: Option<Environment>,
    config: &WidgetConfig,
) -> Validation {
    match options {
        Value::Object(map) => validate(map, target, env_hint, config),
        _ => Validation {
            errors: vec![Issue::new(IssueCode::OptionsNotObject, "")],
            warnings: Vec::new(),
            mode: Mode::Standard,
            options: None,
        },
    }
}

struct Validator<'a> {
    options: &'a Map<String, Value>,
    target: Target,
    config: &'a WidgetConfig,
    errors: Vec<Issue>,
    warnings: Vec<Issue>,
}

/// `tokens` as far as other checks need it.
struct TokenList {
    /// The list, when it is entirely valid.
    valid: Option<Vec<String>>,
    /// Supported symbols named in it (case and spaces forgiven), for the receive-address check;
    /// `None` when `tokens` is absent or unusable.
    members: Option<Vec<String>>,
}

/// The currency the amount minimum uses: `None` when `currencies` is invalid.
enum CurrencyState {
    Default,
    Given(Currency),
    Invalid,
}

impl<'a> Validator<'a> {
    fn push(&mut self, issue: Issue) {
        match issue.severity() {
            Severity::Error => self.errors.push(issue),
            Severity::Warning => self.warnings.push(issue),
        }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.options.get(key)
    }

    /// A string value, or `None` after reporting its type, size or a secret key in it.
    fn string(&mut self, value: &'a Value, path: &str) -> Option<&'a str> {
        match value {
            Value::String(s) if s.len() > MAX_VALUE_BYTES => {
                self.push(Issue::new(IssueCode::ValueTooLong, path).with_value(s));
                None
            }
            Value::String(s) if contains_secret_key(s) => {
                self.push(Issue::new(IssueCode::SecretKeyInOption, path).with_value(s));
                None
            }
            Value::String(s) => Some(s),
            other => {
                self.push(Issue::new(IssueCode::WrongType, path).with_value(&describe(other)));
                None
            }
        }
    }

    /// A key's string value (shown redacted), or `None` after reporting its type or size.
    fn key_string(&mut self, value: &'a Value, path: &str) -> Option<&'a str> {
        match value {
            Value::String(s) if s.len() > MAX_VALUE_BYTES => {
                self.push(Issue::new(IssueCode::ValueTooLong, path).with_key(s));
                None
            }
            Value::String(s) => Some(s),
            other => {
                self.push(Issue::new(IssueCode::WrongType, path).with_value(&describe(other)));
                None
            }
        }
    }

    fn boolean(&mut self, key: &str) -> Option<bool> {
        match self.get(key)? {
            Value::Bool(b) => Some(*b),
            other => {
                self.push(Issue::new(IssueCode::WrongType, key).with_value(&describe(other)));
                None
            }
        }
    }

    fn run(mut self, env_hint: Option<Environment>) -> Validation {
        if self.options.len() > MAX_OPTIONS {
            self.push(Issue::new(IssueCode::TooManyOptions, ""));
        }
        let client_name = self.client_name();
        let environment = self.environment(env_hint);
        let (public_key, api_key) = self.keys(environment);
        let tokens = self.tokens();
        let home_screen_message = self.home_screen_message();
        let receive_addresses = self.receive_addresses(environment, tokens.members.as_deref());
        let target_container_id = self.target_container_id();
        let dark_theme = self.boolean("darkTheme");
        let currency = self.currency();
        let amount = self.amount(&currency);
        let show_logo = self.boolean(self.config.logo_option());
        self.unknown_options();
        let mode = self.mode();

        let options = match (environment, self.errors.is_empty()) {
            (Some(environment), true) => Some(ValidatedOptions {
                target: self.target,
                environment,
                mode,
                client_name,
                public_key,
                api_key,
                tokens: tokens.valid,
                home_screen_message,
                receive_addresses,
                target_container_id,
                dark_theme,
                currency: match currency {
                    CurrencyState::Given(c) => Some(c),
                    CurrencyState::Default | CurrencyState::Invalid => None,
                },
                amount,
                show_logo,
                defaults: Defaults {
                    client_name: self.config.default_client_name().to_owned(),
                    home_screen_message: self.config.default_home_screen_message().to_owned(),
                    tokens: self.config.coins().symbols().map(str::to_owned).collect(),
                    amount: match currency {
                        CurrencyState::Given(c) => self.config.minimum(c),
                        CurrencyState::Default | CurrencyState::Invalid => self.config.minimum(Currency::Usd),
                    },
                    logo_option: self.config.logo_option().to_owned(),
                },
            }),
            _ => None,
        };
        Validation { errors: self.errors, warnings: self.warnings, mode, options }
    }

    fn environment(&mut self, hint: Option<Environment>) -> Option<Environment> {
        let given = self.get("environment").map(|value| match self.string(value, "environment") {
            Some("sandbox") => Some(Environment::Sandbox),
            Some("production") => Some(Environment::Production),
            Some(other) => {
                self.push(Issue::new(IssueCode::EnvironmentInvalid, "environment").with_value(other));
                None
            }
            None => None,
        });
        match (given, hint) {
            (Some(Some(env)), Some(hint)) if env != hint => {
                self.push(Issue::new(IssueCode::EnvironmentMismatch, "environment").with_value(env.as_str()));
                None
            }
            (Some(Some(env)), _) => Some(env),
            // Already reported; the hint still drives the checks that depend on it.
            (Some(None), hint) => hint,
            // A caller's hint wins; a key of the other environment is then `publicKey`'s error.
            (None, Some(hint)) => Some(hint),
            // No option and no hint: a publishable key's prefix says it.
            (None, None) if self.key_environment().is_some() => self.key_environment(),
            (None, hint) => {
                self.push(Issue::new(IssueCode::EnvironmentRequired, "environment"));
                hint
            }
        }
    }

    /// The environment a well-formed `publicKey` names (`pk_sandbox_...`), if any.
    fn key_environment(&self) -> Option<Environment> {
        self.get("publicKey").and_then(Value::as_str).and_then(publishable_key_environment)
    }

    fn client_name(&mut self) -> Option<String> {
        let codes = [IssueCode::ClientNameEmpty, IssueCode::ClientNameTooLong, IssueCode::ClientNameControlCharacter];
        self.display_text("clientName", MAX_CLIENT_NAME_CHARS, codes)
    }

    /// A text shown to the user: not blank, at most `max` characters, no control characters;
    /// `codes` are the issues for those three rules, in that order.
    fn display_text(&mut self, option: &str, max: usize, codes: [IssueCode; 3]) -> Option<String> {
        let value = self.get(option)?;
        let text = self.string(value, option)?;
        let [empty, too_long, control] = codes;
        let code = if text.trim().is_empty() {
            empty
        } else if text.chars().count() > max {
            too_long
        } else if text.chars().any(char::is_control) {
            control
        } else {
            return Some(text.to_owned());
        };
        self.push(Issue::new(code, option).with_value(text));
        None
    }

    fn keys(&mut self, environment: Option<Environment>) -> (Option<String>, Option<String>) {
        let (pk, ak) = (self.get("publicKey"), self.get("apiKey"));
        if pk.is_none() && ak.is_none() {
            self.push(Issue::new(IssueCode::PublicKeyRequired, "publicKey"));
        }
        let public_key = pk.and_then(|value| {
            let key = self.key_string(value, "publicKey")?;
            let code = if key.starts_with("sk_") {
                IssueCode::PublicKeySecret
            } else {
                match publishable_key_environment(key) {
                    None => IssueCode::PublicKeyFormat,
                    Some(env) if environment.is_some_and(|e| e != env) => IssueCode::PublicKeyEnvironment,
                    Some(_) => return Some(key.to_owned()),
                }
            };
            self.push(Issue::new(code, "publicKey").with_key(key));
            None
        });
        let api_key = ak.and_then(|value| {
            let shown = value.as_str().unwrap_or_default();
            self.push(Issue::new(IssueCode::ApiKeyDeprecated, "apiKey").with_key(shown));
            let key = self.key_string(value, "apiKey")?;
            let code = if key.starts_with("sk_") {
                IssueCode::ApiKeySecret
            } else if !is_hyphenated_uuid(key) {
                IssueCode::ApiKeyFormat
            } else {
                return Some(key.to_owned());
            };
            self.push(Issue::new(code, "apiKey").with_key(key));
            None
        });
        (public_key, api_key)
    }

    fn tokens(&mut self) -> TokenList {
        let unusable = TokenList { valid: None, members: None };
        let Some(value) = self.get("tokens") else { return unusable };
        let Some(list) = self.string(value, "tokens") else { return unusable };
        if list.is_empty() {
            self.push(Issue::new(IssueCode::TokensEmpty, "tokens"));
            return unusable;
        }
        let errors_before = self.errors.len();
        let mut members: Vec<String> = Vec::new();
        let mut items = Vec::new();
        for (i, item) in list.split(',').enumerate() {
            let path = format!("tokens[{i}]");
            let normal = item.trim().to_ascii_lowercase();
            let supported = self.config.coins().get(&normal).is_some();
            let exact = supported.then(|| normal.clone());
            let issue = if item.is_empty() {
                Some(Issue::new(IssueCode::TokensEmptyItem, path))
            } else if item.chars().any(char::is_whitespace) {
                Some(Issue::new(IssueCode::TokensSpace, path).with_value(item).with_suggestion(exact))
            } else if item.bytes().any(|b| b.is_ascii_uppercase()) {
                Some(Issue::new(IssueCode::TokensUppercase, path).with_value(item).with_suggestion(exact))
            } else if !supported {
                let nearest = suggest(item, self.config.coins().symbols());
                Some(Issue::new(IssueCode::TokensUnsupported, path).with_value(item).with_suggestion(nearest))
            } else if members.contains(&normal) {
                Some(Issue::new(IssueCode::TokensDuplicate, path).with_value(item))
            } else {
                None
            };
            if let Some(issue) = issue {
                self.push(issue);
            }
            if supported && !members.contains(&normal) {
                members.push(normal);
            }
            items.push(item.to_owned());
        }
        let valid = (self.errors.len() == errors_before).then_some(items);
        TokenList { valid, members: Some(members) }
    }

    fn home_screen_message(&mut self) -> Option<String> {
        let codes = [
            IssueCode::HomeScreenMessageEmpty,
            IssueCode::HomeScreenMessageTooLong,
            IssueCode::HomeScreenMessageControlCharacter,
        ];
        self.display_text("homeScreenMessage", MAX_HOME_SCREEN_MESSAGE_CHARS, codes)
    }

    fn receive_addresses(
        &mut self,
        environment: Option<Environment>,
        members: Option<&[String]>,
    ) -> Vec<(String, String)> {
        let mut valid = Vec::new();
        let Some(value) = self.get("receiveAddress") else { return valid };
        let Value::Object(map) = value else {
            self.push(Issue::new(IssueCode::WrongType, "receiveAddress").with_value(&describe(value)));
            return valid;
        };
        if map.is_empty() {
            self.push(Issue::new(IssueCode::ReceiveAddressEmpty, "receiveAddress"));
            return valid;
        }
        if map.len() > MAX_OPTIONS {
            self.push(Issue::new(IssueCode::TooManyOptions, "receiveAddress"));
        }
        // Without a known environment, testnet is allowed rather than reporting a second error.
        let allow_testnet = environment != Some(Environment::Production);
        let config = self.config;
        for coin in config.coins() {
            let Some(value) = map.get(&coin.symbol) else { continue };
            let path = format!("receiveAddress.{}", coin.symbol);
            let Some(address) = self.string(value, &path) else { continue };
            let mut ok = true;
            if members.is_some_and(|m| !m.contains(&coin.symbol)) {
                self.push(Issue::new(IssueCode::ReceiveAddressNotInTokens, path.clone()).with_value(&coin.symbol));
                ok = false;
            }
            if let Err(error) = validate_address(coin.chain, address, allow_testnet) {
                self.push(Issue::new(IssueCode::Address(error), path).with_value(address));
                ok = false;
            }
            if ok {
                valid.push((coin.symbol.clone(), address.to_owned()));
            }
        }
        let mut unsupported: Vec<&String> = map.keys().filter(|k| config.coins().get(k).is_none()).collect();
        unsupported.sort();
        for key in unsupported.into_iter().take(MAX_OPTIONS) {
            let suggestion = suggest(key, config.coins().symbols());
            let issue = Issue::new(IssueCode::ReceiveAddressUnsupportedCoin, format!("receiveAddress.{}", shown(key)));
            self.push(issue.with_value(key).with_suggestion(suggestion));
        }
        valid
    }

    fn target_container_id(&mut self) -> Option<String> {
        let value = self.get("targetContainerId");
        match (self.target, value) {
            (Target::Script, None) => {
                self.push(Issue::new(IssueCode::TargetContainerIdRequired, "targetContainerId"));
                None
            }
            (Target::Script, Some(value)) => {
                let id = self.string(value, "targetContainerId")?;
                if is_html_id(id) {
                    Some(id.to_owned())
                } else {
                    self.push(Issue::new(IssueCode::TargetContainerIdInvalid, "targetContainerId").with_value(id));
                    None
                }
            }
            (Target::Url, None) => None,
            (Target::Url, Some(value)) => {
                let shown = value.as_str().map_or_else(|| describe(value), str::to_owned);
                self.push(Issue::new(IssueCode::TargetContainerIdIgnored, "targetContainerId").with_value(&shown));
                None
            }
        }
    }

    fn currency(&mut self) -> CurrencyState {
        let Some(value) = self.get("currencies") else { return CurrencyState::Default };
        let Some(name) = self.string(value, "currencies") else { return CurrencyState::Invalid };
        if let Some(currency) = Currency::from_name(name) {
            return CurrencyState::Given(currency);
        }
        let suggestion = suggest(name.trim(), Currency::ALL.iter().map(|c| c.as_str()));
        self.push(
            Issue::new(IssueCode::CurrencyUnsupported, "currencies").with_value(name).with_suggestion(suggestion),
        );
        CurrencyState::Invalid
    }

    fn amount(&mut self, currency: &CurrencyState) -> Option<String> {
        let value = self.get("amount")?;
        if let Value::Number(n) = value {
            self.push(Issue::new(IssueCode::AmountNumber, "amount").with_value(&n.to_string()));
            return None;
        }
        let amount = self.string(value, "amount")?;
        let minor = match parse_amount(amount) {
            Ok(minor) => minor,
            Err(code) => {
                self.push(Issue::new(code, "amount").with_value(amount));
                return None;
            }
        };
        let minimum = match currency {
            CurrencyState::Default => Some(self.config.minimum_minor_units(Currency::Usd)),
            CurrencyState::Given(c) => Some(self.config.minimum_minor_units(*c)),
            // Which minimum applies is unknown; the currency error says enough.
            CurrencyState::Invalid => None,
        };
        if minimum.is_some_and(|m| minor < m) {
            self.push(Issue::new(IssueCode::AmountBelowMinimum, "amount").with_value(amount));
            return None;
        }
        Some(amount.to_owned())
    }

    fn unknown_options(&mut self) {
        let config = self.config;
        let mut unknown: Vec<&String> =
            self.options.keys().filter(|k| OptionName::from_key(k, config).is_none()).collect();
        unknown.sort();
        for key in unknown.into_iter().take(MAX_OPTIONS) {
            let suggestion = suggest_option(key, config);
            self.push(Issue::new(IssueCode::UnknownOption, shown(key)).with_suggestion(suggestion));
        }
    }

    /// One-screen checkout needs exactly one coin in `tokens`, a receive address for it (the
    /// only entry of `receiveAddress`) and an `amount`; presence counts, validity does not.
    fn mode(&self) -> Mode {
        let token = match self.get("tokens") {
            Some(Value::String(s)) if !s.is_empty() && !s.contains(',') => Some(s.trim().to_ascii_lowercase()),
            _ => None,
        };
        let address_coin = match self.get("receiveAddress") {
            Some(Value::Object(map)) if map.len() == 1 => map.keys().next().map(|k| k.trim().to_ascii_lowercase()),
            _ => None,
        };
        let has_token = token.is_some();
        let has_address = match (&address_coin, &token) {
            (Some(coin), Some(token)) => coin == token,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let has_amount = self.options.contains_key("amount");
        match (has_token, has_address, has_amount) {
            (true, true, true) => Mode::OneScreenCheckout,
            (false, true, true) => Mode::Incomplete { missing: CheckoutPart::Token },
            (true, false, true) => Mode::Incomplete { missing: CheckoutPart::ReceiveAddress },
            (true, true, false) => Mode::Incomplete { missing: CheckoutPart::Amount },
            _ => Mode::Standard,
        }
    }
}

/// The likely intended option name for an unknown one.
pub(crate) fn suggest_option(key: &str, config: &WidgetConfig) -> Option<String> {
    let lower = key.to_ascii_lowercase();
    // The URL form of a receive address, or another brand's logo option.
    if lower.starts_with("receiveaddress") && lower.len() > "receiveaddress".len() {
        return Some("receiveAddress".to_owned());
    }
    if lower.starts_with("show") && lower.ends_with("logo") && key.len() <= 64 {
        return Some(config.logo_option().to_owned());
    }
    suggest(key, OptionName::ALL.iter().map(|o| o.key(config)))
}

/// A non-string value as an issue shows it: scalars as JSON, containers by kind.
fn describe(value: &Value) -> String {
    match value {
        Value::Array(_) => "[…]".to_owned(),
        Value::Object(_) => "{…}".to_owned(),
        Value::String(s) => s.clone(),
        scalar => scalar.to_string(),
    }
}

/// The environment of `pk_<environment>_<1 to 128 letters and digits>`.
fn publishable_key_environment(key: &str) -> Option<Environment> {
    let rest = key.strip_prefix("pk_")?;
    let (env, body) = if let Some(body) = rest.strip_prefix("sandbox_") {
        (Environment::Sandbox, body)
    } else {
        (Environment::Production, rest.strip_prefix("production_")?)
    };
    let ok = !body.is_empty() && body.len() <= MAX_KEY_BODY && body.bytes().all(|b| b.is_ascii_alphanumeric());
    ok.then_some(env)
}

/// `8-4-4-4-12` hexadecimal digits.
fn is_hyphenated_uuid(text: &str) -> bool {
    text.len() == 36
        && text.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// An HTML id (non-empty, no ASCII white space) that is also short and free of control characters.
fn is_html_id(id: &str) -> bool {
    let n = id.chars().count();
    n > 0 && n <= MAX_CONTAINER_ID_CHARS && !id.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Parses a plain decimal amount into minor units (hundredths), saturating on huge values.
///
/// Grammar: `digits [ "." 1*2digits ]`, no leading zeros (`0` and `0.5` are fine), no sign,
/// exponent or white space. Errors name the first rule broken.
pub(crate) fn parse_amount(text: &str) -> Result<u64, IssueCode> {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if text.starts_with(['+', '-']) {
        return Err(IssueCode::AmountSign);
    }
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (text, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    if !digits(int) || frac.is_some_and(|f| !digits(f)) {
        return Err(IssueCode::AmountFormat);
    }
    if let Some(exponent) = exponent {
        let unsigned = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        return Err(if digits(unsigned) { IssueCode::AmountExponent } else { IssueCode::AmountFormat });
    }
    let frac = frac.unwrap_or("");
    if frac.len() > 2 {
        return Err(IssueCode::AmountTooManyDecimals);
    }
    if int.len() > 1 && int.starts_with('0') {
        return Err(IssueCode::AmountLeadingZero);
    }
    let mut minor: u64 = 0;
    for b in int.bytes().chain(frac.bytes()).chain(std::iter::repeat_n(b'0', 2 - frac.len())) {
        minor = minor.saturating_mul(10).saturating_add(u64::from(b - b'0'));
    }
    Ok(minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amount_grammar() {
        assert_eq!(parse_amount("5"), Ok(500));
        assert_eq!(parse_amount("49.99"), Ok(4999));
        assert_eq!(parse_amount("0.5"), Ok(50));
        assert_eq!(parse_amount("0"), Ok(0));
        assert_eq!(parse_amount("99999999999999999999999"), Ok(u64::MAX));
        assert_eq!(parse_amount("-5"), Err(IssueCode::AmountSign));
        assert_eq!(parse_amount("+5"), Err(IssueCode::AmountSign));
        assert_eq!(parse_amount("1e3"), Err(IssueCode::AmountExponent));
        assert_eq!(parse_amount("1.5E-2"), Err(IssueCode::AmountExponent));
        assert_eq!(parse_amount("5.001"), Err(IssueCode::AmountTooManyDecimals));
        assert_eq!(parse_amount("05"), Err(IssueCode::AmountLeadingZero));
        for bad in ["", ".5", "5.", "5,00", " 5", "5 ", "abc", "1e", "e3", "5..0", "١٢"] {
            assert_eq!(parse_amount(bad), Err(IssueCode::AmountFormat), "{bad:?}");
        }
    }

    #[test]
    fn keys_and_ids() {
        assert_eq!(publishable_key_environment("pk_sandbox_abc123"), Some(Environment::Sandbox));
        assert_eq!(publishable_key_environment("pk_production_X"), Some(Environment::Production));
        assert_eq!(publishable_key_environment("pk_production_"), None);
        assert_eq!(publishable_key_environment("pk_test_abc"), None);
        assert_eq!(publishable_key_environment("pk_sandbox_a-b"), None);
        assert!(is_hyphenated_uuid("6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11"));
        assert!(!is_hyphenated_uuid("6f1c2a4e93b14c558f1e0b9b6a0d2c11"));
        assert!(is_html_id("widget-1"));
        assert!(is_html_id("ünïcode"));
        assert!(!is_html_id("two words"));
        assert!(!is_html_id(""));
    }
}
