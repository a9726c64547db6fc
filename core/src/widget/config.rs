//! Widget configuration: the two roots, the brand, the defaults, the supported coins and the
//! minimum amounts.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

use super::address::Chain;
use crate::vocab::Environment;

/// The default production root.
pub const DEFAULT_PRODUCTION_ROOT: &str = "https://widget.rampart.network";
/// The default sandbox root.
pub const DEFAULT_SANDBOX_ROOT: &str = "https://widget-sandbox.rampart.network";
/// The default brand: the logo option is `show<Brand>Logo` and the script global `<Brand>`.
pub const DEFAULT_BRAND: &str = "Rampart";
/// The default `clientName`.
pub const DEFAULT_CLIENT_NAME: &str = "Rampart Widget";
/// The default `homeScreenMessage`: a fixed tagline.
pub const DEFAULT_HOME_SCREEN_MESSAGE: &str = "Buy crypto with your card or bank transfer in minutes.";
/// The default minimum purchase, in minor units (cents, pence), for every currency: 5.
pub const DEFAULT_MINIMUM_MINOR_UNITS: u64 = 500;
/// The most coins a registry holds.
pub const MAX_COINS: usize = 64;
/// The longest brand, in ASCII letters.
pub const MAX_BRAND_LEN: usize = 32;
/// The longest `clientName`, in characters.
pub const MAX_CLIENT_NAME_CHARS: usize = 100;
/// The longest `homeScreenMessage`, in characters.
pub const MAX_HOME_SCREEN_MESSAGE_CHARS: usize = 200;

/// A settlement currency (the `currencies` option).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Currency {
    /// US dollar, the default.
    Usd,
    /// Euro.
    Eur,
    /// Pound sterling.
    Gbp,
}

impl Currency {
    /// Every currency, the default first.
    pub const ALL: [Currency; 3] = [Currency::Usd, Currency::Eur, Currency::Gbp];

    /// `"usd"`, `"eur"` or `"gbp"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Currency::Usd => "usd",
            Currency::Eur => "eur",
            Currency::Gbp => "gbp",
        }
    }

    /// The currency with exactly this lower-case name.
    pub fn from_name(name: &str) -> Option<Currency> {
        Currency::ALL.into_iter().find(|c| c.as_str() == name)
    }

    fn index(self) -> usize {
        match self {
            Currency::Usd => 0,
            Currency::Eur => 1,
            Currency::Gbp => 2,
        }
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Currency {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Currency::from_name(s).ok_or(ConfigError::CurrencyInvalid)
    }
}

/// A supported coin: its symbol (as written in `tokens` and `receiveAddress`), the chain whose
/// address rules apply, and a display name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coin {
    /// Lower-case ASCII letters and digits, 1 to 10 of them, e.g. `"btc"`.
    pub symbol: String,
    /// The chain that validates its receive addresses.
    pub chain: Chain,
    /// A display name, e.g. `"Bitcoin"`.
    pub name: String,
}

impl Coin {
    /// A coin; the symbol is checked when the coin joins a [`CoinRegistry`].
    pub fn new(symbol: impl Into<String>, chain: Chain, name: impl Into<String>) -> Coin {
        Coin { symbol: symbol.into(), chain, name: name.into() }
    }

    /// The URL parameter carrying its receive address: `receiveAddress` + the symbol with its
    /// first letter capitalised (`receiveAddressBtc`).
    pub fn url_parameter(&self) -> String {
        let mut name = String::with_capacity(RECEIVE_ADDRESS.len() + self.symbol.len());
        push_receive_address_parameter(&mut name, &self.symbol);
        name
    }
}

const RECEIVE_ADDRESS: &str = "receiveAddress";

/// Appends `receiveAddress<Symbol>` without allocating.
pub(crate) fn push_receive_address_parameter(out: &mut String, symbol: &str) {
    out.push_str(RECEIVE_ADDRESS);
    let mut chars = symbol.chars();
    if let Some(first) = chars.next() {
        out.push(first.to_ascii_uppercase());
        out.push_str(chars.as_str());
    }
}

/// The supported coins, in order. The order is the canonical order of the receive-address URL
/// parameters and the default `tokens` list.
///
/// The default holds btc (Bitcoin), ltc (Litecoin), eth, usdc, usdt, dai (Ethereum) and sol
/// (Solana).
///
/// ```
/// use rampart_core::widget::{Coin, CoinRegistry};
/// use rampart_core::widget::address::Chain;
///
/// let coins = CoinRegistry::default().without("dai")?.with(Coin::new("pol", Chain::Ethereum, "Polygon"))?;
/// assert_eq!(coins.symbols().collect::<Vec<_>>(), ["btc", "ltc", "eth", "usdc", "usdt", "sol", "pol"]);
/// # Ok::<(), rampart_core::widget::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoinRegistry {
    coins: Vec<Coin>,
}

impl Default for CoinRegistry {
    fn default() -> Self {
        let coins = [
            ("btc", Chain::Bitcoin, "Bitcoin"),
            ("ltc", Chain::Litecoin, "Litecoin"),
            ("eth", Chain::Ethereum, "Ether"),
            ("usdc", Chain::Ethereum, "USD Coin"),
            ("usdt", Chain::Ethereum, "Tether USD"),
            ("dai", Chain::Ethereum, "Dai"),
            ("sol", Chain::Solana, "Solana"),
        ];
        CoinRegistry { coins: coins.into_iter().map(|(s, c, n)| Coin::new(s, c, n)).collect() }
    }
}

impl CoinRegistry {
    /// A registry of these coins, in this order: 1 to [`MAX_COINS`] coins with valid, unique
    /// symbols.
    pub fn new(coins: Vec<Coin>) -> Result<CoinRegistry, ConfigError> {
        if coins.is_empty() {
            return Err(ConfigError::CoinsEmpty);
        }
        if coins.len() > MAX_COINS {
            return Err(ConfigError::CoinsTooMany);
        }
        for (i, coin) in coins.iter().enumerate() {
            check_coin(coin)?;
            if coins.iter().take(i).any(|c| c.symbol == coin.symbol) {
                return Err(ConfigError::CoinDuplicate);
            }
        }
        Ok(CoinRegistry { coins })
    }

    /// This registry with `coin` appended.
    pub fn with(mut self, coin: Coin) -> Result<CoinRegistry, ConfigError> {
        self.coins.push(coin);
        CoinRegistry::new(self.coins)
    }

    /// This registry without the coin of this symbol (an error if it is absent or the last one).
    pub fn without(mut self, symbol: &str) -> Result<CoinRegistry, ConfigError> {
        let before = self.coins.len();
        self.coins.retain(|c| c.symbol != symbol);
        if self.coins.len() == before {
            return Err(ConfigError::CoinUnknown);
        }
        CoinRegistry::new(self.coins)
    }

    /// The coin with exactly this symbol.
    pub fn get(&self, symbol: &str) -> Option<&Coin> {
        self.coins.iter().find(|c| c.symbol == symbol)
    }

    /// The coins in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Coin> {
        self.coins.iter()
    }

    /// The symbols in order.
    pub fn symbols(&self) -> impl Iterator<Item = &str> {
        self.coins.iter().map(|c| c.symbol.as_str())
    }

    /// How many coins.
    pub fn len(&self) -> usize {
        self.coins.len()
    }

    /// Never true for a registry built by [`CoinRegistry::new`]; here for completeness.
    pub fn is_empty(&self) -> bool {
        self.coins.is_empty()
    }
}

impl<'a> IntoIterator for &'a CoinRegistry {
    type Item = &'a Coin;
    type IntoIter = std::slice::Iter<'a, Coin>;
    fn into_iter(self) -> Self::IntoIter {
        self.coins.iter()
    }
}

fn check_coin(coin: &Coin) -> Result<(), ConfigError> {
    let symbol_ok = (1..=10).contains(&coin.symbol.len())
        && coin.symbol.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if !symbol_ok {
        return Err(ConfigError::CoinSymbolInvalid);
    }
    let name_chars = coin.name.chars().count();
    if name_chars == 0 || name_chars > 64 || coin.name.chars().any(char::is_control) {
        return Err(ConfigError::CoinNameInvalid);
    }
    Ok(())
}

/// Everything the widget functions need to know about the deployment.
///
/// Built with [`WidgetConfig::default`] (the Rampart roots) or [`WidgetConfig::with_domain`],
/// then refined with the `with_*` methods, each of which checks its input. Pass the same
/// configuration to [`validate`](super::validate) and to the functions that use its result.
///
/// ```
/// use rampart_core::widget::{Currency, WidgetConfig};
/// use rampart_core::Environment;
///
/// let config = WidgetConfig::with_domain("example.com")?.with_brand("Acme")?;
/// assert_eq!(config.root(Environment::Sandbox).as_str(), "https://widget-sandbox.example.com/");
/// assert_eq!(config.logo_option(), "showAcmeLogo");
/// assert_eq!(config.minimum(Currency::Eur), "5");
/// # Ok::<(), rampart_core::widget::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WidgetConfig {
    production_root: Url,
    sandbox_root: Url,
    brand: String,
    logo_option: String,
    default_client_name: String,
    default_home_screen_message: String,
    coins: CoinRegistry,
    minimums: [u64; 3],
}

impl Default for WidgetConfig {
    fn default() -> Self {
        WidgetConfig {
            // Constants, covered by the unit tests below.
            production_root: Url::parse(DEFAULT_PRODUCTION_ROOT).expect("default production root parses"),
            sandbox_root: Url::parse(DEFAULT_SANDBOX_ROOT).expect("default sandbox root parses"),
            brand: DEFAULT_BRAND.to_owned(),
            logo_option: logo_option_for(DEFAULT_BRAND),
            default_client_name: DEFAULT_CLIENT_NAME.to_owned(),
            default_home_screen_message: DEFAULT_HOME_SCREEN_MESSAGE.to_owned(),
            coins: CoinRegistry::default(),
            minimums: [DEFAULT_MINIMUM_MINOR_UNITS; 3],
        }
    }
}

fn logo_option_for(brand: &str) -> String {
    let mut name = String::with_capacity(brand.len() + 8);
    name.push_str("show");
    let mut chars = brand.chars();
    if let Some(first) = chars.next() {
        name.push(first.to_ascii_uppercase());
        name.push_str(chars.as_str());
    }
    name.push_str("Logo");
    name
}

/// Checks a root: an absolute https URL with a host and no credentials, query or fragment.
fn parse_root(text: &str) -> Result<Url, ConfigError> {
    let url = Url::parse(text).map_err(|_| ConfigError::RootInvalid)?;
    // http only for the local machine: a development server (`make run`) serves its own widget.
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if url.scheme() != "https" && !(url.scheme() == "http" && loopback) {
        return Err(ConfigError::RootNotHttps);
    }
    if url.host_str().is_none_or(str::is_empty) || url.cannot_be_a_base() {
        return Err(ConfigError::RootInvalid);
    }
    if !url.username().is_empty() || url.password().is_some() || url.query().is_some() || url.fragment().is_some() {
        return Err(ConfigError::RootExtras);
    }
    Ok(url)
}

fn check_text(text: &str, max_chars: usize) -> bool {
    let n = text.chars().count();
    n > 0 && n <= max_chars && !text.trim().is_empty() && !text.chars().any(char::is_control)
}

impl WidgetConfig {
    /// The default configuration with the roots `https://widget.<domain>` and
    /// `https://widget-sandbox.<domain>` (SPEC section 4).
    pub fn with_domain(domain: &str) -> Result<WidgetConfig, ConfigError> {
        let ok = !domain.is_empty()
            && domain.len() <= 240
            && domain.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
        if !ok {
            return Err(ConfigError::DomainInvalid);
        }
        let production = parse_root(&format!("https://widget.{domain}"))?;
        let sandbox = parse_root(&format!("https://widget-sandbox.{domain}"))?;
        Ok(WidgetConfig { production_root: production, sandbox_root: sandbox, ..WidgetConfig::default() })
    }

    /// This configuration with another production root (an absolute https URL; http only on a
    /// loopback host).
    pub fn with_production_root(mut self, root: &str) -> Result<WidgetConfig, ConfigError> {
        let url = parse_root(root)?;
        if url == self.sandbox_root {
            return Err(ConfigError::RootsEqual);
        }
        self.production_root = url;
        Ok(self)
    }

    /// This configuration with another sandbox root (an absolute https URL; http only on a
    /// loopback host).
    pub fn with_sandbox_root(mut self, root: &str) -> Result<WidgetConfig, ConfigError> {
        let url = parse_root(root)?;
        if url == self.production_root {
            return Err(ConfigError::RootsEqual);
        }
        self.sandbox_root = url;
        Ok(self)
    }

    /// This configuration with another brand: 1 to [`MAX_BRAND_LEN`] ASCII letters. It names the
    /// logo option (`show<Brand>Logo`, first letter capitalised) and the script global.
    pub fn with_brand(mut self, brand: &str) -> Result<WidgetConfig, ConfigError> {
        if brand.is_empty() || brand.len() > MAX_BRAND_LEN || !brand.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(ConfigError::BrandInvalid);
        }
        brand.clone_into(&mut self.brand);
        self.logo_option = logo_option_for(brand);
        Ok(self)
    }

    /// This configuration with another default `clientName` (1 to 100 characters, no control
    /// characters).
    pub fn with_default_client_name(mut self, name: &str) -> Result<WidgetConfig, ConfigError> {
        if !check_text(name, MAX_CLIENT_NAME_CHARS) {
            return Err(ConfigError::ClientNameInvalid);
        }
        name.clone_into(&mut self.default_client_name);
        Ok(self)
    }

    /// This configuration with another default `homeScreenMessage` (1 to 200 characters, no
    /// control characters).
    pub fn with_default_home_screen_message(mut self, message: &str) -> Result<WidgetConfig, ConfigError> {
        if !check_text(message, MAX_HOME_SCREEN_MESSAGE_CHARS) {
            return Err(ConfigError::HomeScreenMessageInvalid);
        }
        message.clone_into(&mut self.default_home_screen_message);
        Ok(self)
    }

    /// This configuration with another coin registry.
    pub fn with_coins(mut self, coins: CoinRegistry) -> WidgetConfig {
        self.coins = coins;
        self
    }

    /// This configuration with another minimum for a currency, written as a plain decimal with
    /// at most 2 decimals (`"5"`, `"7.50"`).
    pub fn with_minimum(mut self, currency: Currency, minimum: &str) -> Result<WidgetConfig, ConfigError> {
        let minor = super::validate::parse_amount(minimum).map_err(|_| ConfigError::MinimumInvalid)?;
        if let Some(slot) = self.minimums.get_mut(currency.index()) {
            *slot = minor;
        }
        Ok(self)
    }

    /// A configuration from JSON, the form the other surfaces and the shared vectors use.
    ///
    /// Every field is optional and applied over the defaults in this order: `domain`,
    /// `productionRoot`, `sandboxRoot`, `brand`, `defaultClientName`, `defaultHomeScreenMessage`,
    /// `coins` (`[{"symbol","chain","name"}]`, `chain` one of `bitcoin`, `litecoin`, `ethereum`,
    /// `solana`) and `minimums` (`{"usd": "5", ...}`). Unknown fields are an error.
    pub fn from_json(json: &Value) -> Result<WidgetConfig, ConfigError> {
        const FIELDS: [&str; 8] = [
            "domain",
            "productionRoot",
            "sandboxRoot",
            "brand",
            "defaultClientName",
            "defaultHomeScreenMessage",
            "coins",
            "minimums",
        ];
        let object = json.as_object().ok_or(ConfigError::JsonInvalid)?;
        if object.keys().any(|k| !FIELDS.contains(&k.as_str())) {
            return Err(ConfigError::JsonInvalid);
        }
        let text = |name: &str| -> Result<Option<&str>, ConfigError> {
            match object.get(name) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(_) => Err(ConfigError::JsonInvalid),
            }
        };
        let mut config = match text("domain")? {
            Some(domain) => WidgetConfig::with_domain(domain)?,
            None => WidgetConfig::default(),
        };
        if let Some(root) = text("productionRoot")? {
            config = config.with_production_root(root)?;
        }
        if let Some(root) = text("sandboxRoot")? {
            config = config.with_sandbox_root(root)?;
        }
        if let Some(brand) = text("brand")? {
            config = config.with_brand(brand)?;
        }
        if let Some(name) = text("defaultClientName")? {
            config = config.with_default_client_name(name)?;
        }
        if let Some(message) = text("defaultHomeScreenMessage")? {
            config = config.with_default_home_screen_message(message)?;
        }
        if let Some(coins) = object.get("coins") {
            let list = coins.as_array().ok_or(ConfigError::JsonInvalid)?;
            let mut parsed = Vec::with_capacity(list.len().min(MAX_COINS));
            for coin in list.iter().take(MAX_COINS + 1) {
                let field = |name: &str| coin.get(name).and_then(Value::as_str).ok_or(ConfigError::JsonInvalid);
                let chain = Chain::from_name(field("chain")?).ok_or(ConfigError::JsonInvalid)?;
                parsed.push(Coin::new(field("symbol")?, chain, field("name")?));
            }
            config = config.with_coins(CoinRegistry::new(parsed)?);
        }
        if let Some(minimums) = object.get("minimums") {
            let minimums = minimums.as_object().ok_or(ConfigError::JsonInvalid)?;
            for (name, value) in minimums {
                let currency = Currency::from_name(name).ok_or(ConfigError::CurrencyInvalid)?;
                config = config.with_minimum(currency, value.as_str().ok_or(ConfigError::JsonInvalid)?)?;
            }
        }
        Ok(config)
    }

    /// The root of an environment.
    pub fn root(&self, environment: Environment) -> &Url {
        match environment {
            Environment::Production => &self.production_root,
            Environment::Sandbox => &self.sandbox_root,
        }
    }

    /// The environment whose root this is.
    pub fn environment_of(&self, root: &Url) -> Option<Environment> {
        if *root == self.production_root {
            Some(Environment::Production)
        } else if *root == self.sandbox_root {
            Some(Environment::Sandbox)
        } else {
            None
        }
    }

    /// The brand, e.g. `"Rampart"`.
    pub fn brand(&self) -> &str {
        &self.brand
    }

    /// The logo option's name, `show<Brand>Logo` (`showRampartLogo`).
    pub fn logo_option(&self) -> &str {
        &self.logo_option
    }

    /// The `clientName` used when the partner gives none.
    pub fn default_client_name(&self) -> &str {
        &self.default_client_name
    }

    /// The `homeScreenMessage` used when the partner gives none.
    pub fn default_home_screen_message(&self) -> &str {
        &self.default_home_screen_message
    }

    /// The supported coins.
    pub fn coins(&self) -> &CoinRegistry {
        &self.coins
    }

    /// The minimum purchase in a currency, in minor units (500 is 5.00).
    pub fn minimum_minor_units(&self, currency: Currency) -> u64 {
        self.minimums.get(currency.index()).copied().unwrap_or(DEFAULT_MINIMUM_MINOR_UNITS)
    }

    /// The minimum purchase in a currency as a plain decimal (`"5"`, `"7.50"`); also the
    /// default `amount`.
    pub fn minimum(&self, currency: Currency) -> String {
        let minor = self.minimum_minor_units(currency);
        if minor.is_multiple_of(100) {
            format!("{}", minor / 100)
        } else {
            format!("{}.{:02}", minor / 100, minor % 100)
        }
    }
}

/// A configuration value that was refused. Each has a stable [`code`](ConfigError::code) and
/// a fixed [`message`](ConfigError::message).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigError {
    /// A root is not an absolute URL with a host.
    RootInvalid,
    /// A root does not use https.
    RootNotHttps,
    /// A root carries credentials, a query or a fragment.
    RootExtras,
    /// The two roots are the same, so a URL could not say its environment.
    RootsEqual,
    /// The domain is not a DNS name.
    DomainInvalid,
    /// The brand is not 1 to 32 ASCII letters.
    BrandInvalid,
    /// The default client name is empty, too long or has control characters.
    ClientNameInvalid,
    /// The default home-screen message is empty, too long or has control characters.
    HomeScreenMessageInvalid,
    /// A coin symbol is not 1 to 10 lower-case ASCII letters or digits.
    CoinSymbolInvalid,
    /// A coin name is empty, over 64 characters or has control characters.
    CoinNameInvalid,
    /// Two coins share a symbol.
    CoinDuplicate,
    /// The registry would be empty.
    CoinsEmpty,
    /// The registry would hold more than [`MAX_COINS`] coins.
    CoinsTooMany,
    /// No coin has that symbol.
    CoinUnknown,
    /// Not `usd`, `eur` or `gbp`.
    CurrencyInvalid,
    /// A minimum amount is not a plain decimal with at most 2 decimals.
    MinimumInvalid,
    /// The configuration JSON has an unknown field or a value of the wrong type.
    JsonInvalid,
}

impl ConfigError {
    /// The stable snake_case code.
    pub const fn code(self) -> &'static str {
        match self {
            ConfigError::RootInvalid => "config_root_invalid",
            ConfigError::RootNotHttps => "config_root_not_https",
            ConfigError::RootExtras => "config_root_extras",
            ConfigError::RootsEqual => "config_roots_equal",
            ConfigError::DomainInvalid => "config_domain_invalid",
            ConfigError::BrandInvalid => "config_brand_invalid",
            ConfigError::ClientNameInvalid => "config_client_name_invalid",
            ConfigError::HomeScreenMessageInvalid => "config_home_screen_message_invalid",
            ConfigError::CoinSymbolInvalid => "config_coin_symbol_invalid",
            ConfigError::CoinNameInvalid => "config_coin_name_invalid",
            ConfigError::CoinDuplicate => "config_coin_duplicate",
            ConfigError::CoinsEmpty => "config_coins_empty",
            ConfigError::CoinsTooMany => "config_coins_too_many",
            ConfigError::CoinUnknown => "config_coin_unknown",
            ConfigError::CurrencyInvalid => "config_currency_invalid",
            ConfigError::MinimumInvalid => "config_minimum_invalid",
            ConfigError::JsonInvalid => "config_json_invalid",
        }
    }

    /// A fixed English message.
    pub const fn message(self) -> &'static str {
        match self {
            ConfigError::RootInvalid => "A widget root must be an absolute URL with a host.",
            ConfigError::RootNotHttps => {
                "A widget root must use https (http only for localhost or a loopback address)."
            }
            ConfigError::RootExtras => "A widget root must not carry credentials, a query or a fragment.",
            ConfigError::RootsEqual => "The production and sandbox roots must differ.",
            ConfigError::DomainInvalid => "The domain must be a DNS name such as example.com.",
            ConfigError::BrandInvalid => "The brand must be 1 to 32 ASCII letters.",
            ConfigError::ClientNameInvalid => {
                "The default client name must be 1 to 100 characters without control characters."
            }
            ConfigError::HomeScreenMessageInvalid => {
                "The default home-screen message must be 1 to 200 characters without control characters."
            }
            ConfigError::CoinSymbolInvalid => "A coin symbol must be 1 to 10 lower-case ASCII letters or digits.",
            ConfigError::CoinNameInvalid => "A coin name must be 1 to 64 characters without control characters.",
            ConfigError::CoinDuplicate => "Two coins share a symbol.",
            ConfigError::CoinsEmpty => "The coin registry must hold at least one coin.",
            ConfigError::CoinsTooMany => "The coin registry holds at most 64 coins.",
            ConfigError::CoinUnknown => "No coin has that symbol.",
            ConfigError::CurrencyInvalid => "The currency must be usd, eur or gbp.",
            ConfigError::MinimumInvalid => "A minimum amount must be a plain decimal with at most 2 decimals.",
            ConfigError::JsonInvalid => {
                "The widget configuration JSON has an unknown field or a value of the wrong type."
            }
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults() {
        let config = WidgetConfig::default();
        assert_eq!(config.root(Environment::Production).as_str(), "https://widget.rampart.network/");
        assert_eq!(config.root(Environment::Sandbox).as_str(), "https://widget-sandbox.rampart.network/");
        assert_eq!(config.logo_option(), "showRampartLogo");
        assert_eq!(config.coins().symbols().collect::<Vec<_>>(), ["btc", "ltc", "eth", "usdc", "usdt", "dai", "sol"]);
        for currency in Currency::ALL {
            assert_eq!(config.minimum(currency), "5");
        }
        assert_eq!(CoinRegistry::new(config.coins().iter().cloned().collect()).as_ref(), Ok(config.coins()));
    }

    #[test]
    fn roots_are_checked() {
        let config = WidgetConfig::default();
        assert_eq!(config.clone().with_production_root("http://a.example").err(), Some(ConfigError::RootNotHttps));
        assert_eq!(config.clone().with_production_root("widget.example").err(), Some(ConfigError::RootInvalid));
        assert_eq!(config.clone().with_production_root("https://a.example/?x=1").err(), Some(ConfigError::RootExtras));
        assert_eq!(config.clone().with_production_root("https://u:p@a.example").err(), Some(ConfigError::RootExtras));
        assert_eq!(config.clone().with_production_root(DEFAULT_SANDBOX_ROOT).err(), Some(ConfigError::RootsEqual));
        assert!(config.clone().with_sandbox_root("https://test.example/widget/").is_ok());
        for local in ["http://127.0.0.1:8080/widget/", "http://localhost:3000/widget/", "http://[::1]:8080/widget/"] {
            assert!(config.clone().with_sandbox_root(local).is_ok(), "{local}");
        }
        assert_eq!(config.with_sandbox_root("http://10.0.0.1/widget/").err(), Some(ConfigError::RootNotHttps));
        assert_eq!(WidgetConfig::with_domain("a/b").err(), Some(ConfigError::DomainInvalid));
        assert_eq!(WidgetConfig::with_domain("").err(), Some(ConfigError::DomainInvalid));
    }

    #[test]
    fn registry_rules() {
        let coins = CoinRegistry::default();
        assert_eq!(
            coins.clone().with(Coin::new("btc", Chain::Bitcoin, "Again")).err(),
            Some(ConfigError::CoinDuplicate)
        );
        assert_eq!(
            coins.clone().with(Coin::new("BTC2", Chain::Bitcoin, "x")).err(),
            Some(ConfigError::CoinSymbolInvalid)
        );
        assert_eq!(coins.clone().without("doge").err(), Some(ConfigError::CoinUnknown));
        let one = CoinRegistry::new(vec![Coin::new("sol", Chain::Solana, "Solana")]);
        assert_eq!(one.and_then(|c| c.without("sol")).err(), Some(ConfigError::CoinsEmpty));
        assert_eq!(Coin::new("usdc", Chain::Ethereum, "USD Coin").url_parameter(), "receiveAddressUsdc");
    }

    #[test]
    fn from_json() {
        let json = serde_json::json!({
            "domain": "example.com",
            "brand": "acme",
            "coins": [{"symbol": "btc", "chain": "bitcoin", "name": "Bitcoin"}],
            "minimums": {"eur": "7.5"}
        });
        let config = WidgetConfig::from_json(&json).expect("valid config");
        assert_eq!(config.logo_option(), "showAcmeLogo");
        assert_eq!(config.minimum(Currency::Eur), "7.50");
        assert_eq!(config.minimum_minor_units(Currency::Usd), 500);
        assert_eq!(config.coins().len(), 1);
        assert_eq!(
            WidgetConfig::from_json(&serde_json::json!({"colour": "red"})).err(),
            Some(ConfigError::JsonInvalid)
        );
        assert_eq!(
            WidgetConfig::from_json(&serde_json::json!({"minimums": {"usd": "-1"}})).err(),
            Some(ConfigError::MinimumInvalid)
        );
    }
}
