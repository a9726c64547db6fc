//! The option names and a typed builder for Rust callers.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::config::{Currency, WidgetConfig};
use super::validate::{Target, Validation, validate};
use crate::vocab::Environment;

/// The twelve widget options of SPEC section 4, in table order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OptionName {
    /// `clientName`.
    ClientName,
    /// `environment` (script only; a URL's root says it).
    Environment,
    /// `publicKey`.
    PublicKey,
    /// `apiKey` (deprecated).
    ApiKey,
    /// `tokens`.
    Tokens,
    /// `homeScreenMessage`.
    HomeScreenMessage,
    /// `receiveAddress` (one `receiveAddress<Coin>` parameter per coin in a URL).
    ReceiveAddress,
    /// `targetContainerId` (script only).
    TargetContainerId,
    /// `darkTheme`.
    DarkTheme,
    /// `currencies`.
    Currencies,
    /// `amount`.
    Amount,
    /// `show<Brand>Logo` (`showRampartLogo`).
    ShowLogo,
}

impl OptionName {
    /// Every option, in table order.
    pub const ALL: [OptionName; 12] = [
        OptionName::ClientName,
        OptionName::Environment,
        OptionName::PublicKey,
        OptionName::ApiKey,
        OptionName::Tokens,
        OptionName::HomeScreenMessage,
        OptionName::ReceiveAddress,
        OptionName::TargetContainerId,
        OptionName::DarkTheme,
        OptionName::Currencies,
        OptionName::Amount,
        OptionName::ShowLogo,
    ];

    /// The option's name in a script object or JSON; the logo option's depends on the brand.
    pub fn key(self, config: &WidgetConfig) -> &str {
        match self {
            OptionName::ClientName => "clientName",
            OptionName::Environment => "environment",
            OptionName::PublicKey => "publicKey",
            OptionName::ApiKey => "apiKey",
            OptionName::Tokens => "tokens",
            OptionName::HomeScreenMessage => "homeScreenMessage",
            OptionName::ReceiveAddress => "receiveAddress",
            OptionName::TargetContainerId => "targetContainerId",
            OptionName::DarkTheme => "darkTheme",
            OptionName::Currencies => "currencies",
            OptionName::Amount => "amount",
            OptionName::ShowLogo => config.logo_option(),
        }
    }

    /// The option with exactly this name.
    pub fn from_key(key: &str, config: &WidgetConfig) -> Option<OptionName> {
        OptionName::ALL.into_iter().find(|o| o.key(config) == key)
    }

    /// Whether a URL carries it (all but `environment` and `targetContainerId`).
    pub fn in_url(self) -> bool {
        !matches!(self, OptionName::Environment | OptionName::TargetContainerId)
    }
}

/// Typed widget options for Rust callers; `None` (or an empty map) means "not given".
///
/// Other surfaces pass a JSON object straight to [`validate`]; this builds the same object.
///
/// ```
/// use rampart_core::widget::{Target, WidgetConfig, WidgetOptions};
/// use rampart_core::Environment;
///
/// let config = WidgetConfig::default();
/// let options = WidgetOptions {
///     environment: Some(Environment::Sandbox),
///     public_key: Some("pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc".into()),
///     tokens: Some(vec!["btc".into()]),
///     amount: Some("50".into()),
///     ..WidgetOptions::default()
/// };
/// let validation = options.validate(Target::Url, &config);
/// assert!(validation.errors.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WidgetOptions {
    /// `clientName`.
    pub client_name: Option<String>,
    /// `environment`.
    pub environment: Option<Environment>,
    /// `publicKey`.
    pub public_key: Option<String>,
    /// `apiKey` (deprecated).
    pub api_key: Option<String>,
    /// `tokens`, joined with commas.
    pub tokens: Option<Vec<String>>,
    /// `homeScreenMessage`.
    pub home_screen_message: Option<String>,
    /// `receiveAddress`: coin symbol to address; empty means not given.
    pub receive_address: BTreeMap<String, String>,
    /// `targetContainerId`.
    pub target_container_id: Option<String>,
    /// `darkTheme`.
    pub dark_theme: Option<bool>,
    /// `currencies`.
    pub currencies: Option<Currency>,
    /// `amount`, a plain decimal string.
    pub amount: Option<String>,
    /// `show<Brand>Logo`.
    pub show_logo: Option<bool>,
}

impl WidgetOptions {
    /// The options as the JSON object [`validate`] takes (script form).
    pub fn to_json(&self, config: &WidgetConfig) -> Map<String, Value> {
        let mut map = Map::new();
        let mut put = |option: OptionName, value: Option<Value>| {
            if let Some(value) = value {
                map.insert(option.key(config).to_owned(), value);
            }
        };
        put(OptionName::ClientName, self.client_name.clone().map(Value::String));
        put(OptionName::Environment, self.environment.map(|e| Value::from(e.as_str())));
        put(OptionName::PublicKey, self.public_key.clone().map(Value::String));
        put(OptionName::ApiKey, self.api_key.clone().map(Value::String));
        put(OptionName::Tokens, self.tokens.as_ref().map(|t| Value::String(t.join(","))));
        put(OptionName::HomeScreenMessage, self.home_screen_message.clone().map(Value::String));
        let addresses = (!self.receive_address.is_empty()).then(|| {
            Value::Object(self.receive_address.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect())
        });
        put(OptionName::ReceiveAddress, addresses);
        put(OptionName::TargetContainerId, self.target_container_id.clone().map(Value::String));
        put(OptionName::DarkTheme, self.dark_theme.map(Value::Bool));
        put(OptionName::Currencies, self.currencies.map(|c| Value::from(c.as_str())));
        put(OptionName::Amount, self.amount.clone().map(Value::String));
        put(OptionName::ShowLogo, self.show_logo.map(Value::Bool));
        map
    }

    /// [`validate`] these options for a target, with no environment hint.
    pub fn validate(&self, target: Target, config: &WidgetConfig) -> Validation {
        validate(&self.to_json(config), target, None, config)
    }
}
