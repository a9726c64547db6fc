//! Partners: accounts, keys, bearer authentication and widget confirmation-screen settings.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use zeroize::{Zeroize, ZeroizeOnDrop};

use serde_json::{Map, Value};

use crate::audit::{Actor, details, event};
use crate::error::{Error, ErrorKind, Result};
use crate::ids::PartnerId;
use crate::service::Service;
use crate::store::{PartnerRecord, PreviousKey};
pub use crate::vocab::Environment;

/// Random bytes in the random part of a key (192 bits; the spec asks for at least 128).
const KEY_RANDOM_BYTES: usize = 24;
/// Longest widget button text, in characters.
pub const MAX_WIDGET_TEXT_CHARS: usize = 64;
/// Longest widget button URL, in characters.
pub const MAX_WIDGET_URL_CHARS: usize = 2048;
/// Longest partner name, in characters.
pub const MAX_PARTNER_NAME_CHARS: usize = 200;

/// A secret API key (`sk_<environment>_<random>`). Prints redacted, zeroized on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop, PartialEq, Eq)]
pub struct SecretKey(String);

impl SecretKey {
    /// The key text; show it to the partner once, store only its hash.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Its last 4 characters: all the dashboard shows of it afterwards (beside the
    /// `sk_<environment>_` prefix).
    pub fn last4(&self) -> String {
        let start = self.0.len().saturating_sub(4);
        self.0.get(start..).unwrap_or_default().to_owned()
    }
}

/// How long a rolled secret key keeps working beside the new one (SPEC 11): the dashboard's
/// four choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOverlap {
    /// The old key stops at once.
    Now,
    /// One hour.
    Hour,
    /// 24 hours.
    Day,
    /// 7 days.
    Week,
}

impl KeyOverlap {
    /// Every choice, in the dashboard's order.
    pub const ALL: [Self; 4] = [Self::Now, Self::Hour, Self::Day, Self::Week];

    /// `"now"`, `"1h"`, `"24h"` or `"7d"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Now => "now",
            Self::Hour => "1h",
            Self::Day => "24h",
            Self::Week => "7d",
        }
    }

    /// The overlap in seconds.
    pub const fn secs(self) -> u64 {
        match self {
            Self::Now => 0,
            Self::Hour => 3600,
            Self::Day => 86_400,
            Self::Week => 7 * 86_400,
        }
    }

    /// Parse a choice; 400 naming `expiresIn` otherwise.
    pub fn parse(text: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|o| o.as_str() == text)
            .ok_or_else(|| Error::invalid_input("expiresIn", "must be one of now, 1h, 24h, 7d"))
    }
}

/// Widget settings to change together ([`Service::update_widget_settings`]): `None` leaves a
/// setting as it is; `Some(None)` clears the text or URL; origins replace the list.
#[derive(Debug, Clone, Copy, Default)]
pub struct WidgetSettings<'a> {
    /// The confirmation-screen button text.
    pub text: Option<Option<&'a str>>,
    /// The confirmation-screen button URL.
    pub button_url: Option<Option<&'a str>>,
    /// The origins allowed to embed the widget.
    pub origins: Option<&'a [String]>,
}

/// A rolled secret key in its overlap, as callers see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviousKeyInfo {
    /// Its last 4 characters (`None` for a key issued before they were kept).
    pub last4: Option<String>,
    /// Unix seconds from which it is refused.
    pub expires_at: u64,
}

/// What a roll hands out: the new secret key (shown once) and the old key's overlap.
#[derive(Debug, Clone)]
pub struct RolledKey {
    /// The new secret key.
    pub secret_key: SecretKey,
    /// The old key, while it still works (`None` for a roll that ends it at once).
    pub previous: Option<PreviousKeyInfo>,
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

/// What a new partner (or a key rotation) hands out. The secret key is shown only here.
#[derive(Clone, Debug)]
pub struct PartnerCredentials {
    /// The partner's id (the legacy widget `apiKey`).
    pub partner_id: PartnerId,
    /// The secret API key.
    pub secret_key: SecretKey,
    /// The publishable widget key (`pk_<environment>_<random>`), not a credential.
    pub publishable_key: String,
    /// The keys' environment.
    pub environment: Environment,
}

/// A partner, as callers see it (no key hash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partner {
    /// Id.
    pub id: PartnerId,
    /// Display name.
    pub name: String,
    /// Environment.
    pub environment: Environment,
    /// Publishable key.
    pub publishable_key: String,
    /// Confirmation-screen button text.
    pub widget_text: Option<String>,
    /// Confirmation-screen button URL.
    pub widget_button_url: Option<String>,
    /// The operator waived the KYC 2FA requirement.
    pub two_factor_waived: bool,
    /// Origins allowed to embed the widget.
    pub widget_origins: Vec<String>,
    /// An operator approved the production widget (sandbox widgets need no approval).
    pub widget_approved: bool,
    /// The last 4 characters of the secret key (`None` for a key issued before they were kept).
    pub secret_key_last4: Option<String>,
    /// A rolled secret key that still works, until its expiry.
    pub previous_key: Option<PreviousKeyInfo>,
}

impl From<PartnerRecord> for Partner {
    fn from(r: PartnerRecord) -> Self {
        Self {
            id: r.id,
            name: r.name,
            environment: r.environment,
            publishable_key: r.publishable_key,
            widget_text: r.widget_text,
            widget_button_url: r.widget_button_url,
            two_factor_waived: r.two_factor_waived,
            widget_origins: r.widget_origins,
            widget_approved: r.widget_approved,
            secret_key_last4: r.secret_key_last4,
            previous_key: r.previous_key.map(|k| PreviousKeyInfo { last4: k.last4, expires_at: k.expires_at }),
        }
    }
}

/// How a request authenticated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthMethod {
    /// `Bearer sk_...` (recommended).
    SecretKey,
    /// `Bearer <JWT>` (legacy; answers should carry `Deprecation: true`).
    LegacyJwt,
}

/// An authenticated partner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Authenticated {
    /// Who.
    pub partner_id: PartnerId,
    /// How.
    pub method: AuthMethod,
}

/// SHA-256 of a secret key, as stored and looked up.
pub fn secret_key_hash(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// The value of an `Authorization` header without its `Bearer ` scheme (case-insensitive).
pub fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, rest) = header.split_once(' ')?;
    let token = rest.trim_matches(' ');
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn new_key(prefix: &str, env: Environment) -> Result<String> {
    let mut random = [0u8; KEY_RANDOM_BYTES];
    crate::crypto::fill_random(&mut random)?;
    let key = format!("{prefix}_{}_{}", env.as_str(), bs58::encode(&random).into_string());
    random.zeroize();
    Ok(key)
}

fn new_keys(id: PartnerId, env: Environment) -> Result<(PartnerCredentials, [u8; 32])> {
    let secret_key = SecretKey(new_key("sk", env)?);
    let hash = secret_key_hash(secret_key.expose());
    let creds =
        PartnerCredentials { partner_id: id, secret_key, publishable_key: new_key("pk", env)?, environment: env };
    Ok((creds, hash))
}

/// Check a widget button text: 1 to 64 characters, no control characters.
pub fn validate_widget_text(text: &str) -> Result<()> {
    let n = text.chars().count();
    if n == 0 || n > MAX_WIDGET_TEXT_CHARS || text.chars().any(char::is_control) {
        return Err(ErrorKind::WidgetTextInvalid.into());
    }
    Ok(())
}

/// Check a widget button URL: absolute http(s), a host, no credentials, at most 2048
/// characters, no white space or control characters (which URL parsers would silently drop).
pub fn validate_widget_button_url(text: &str) -> Result<()> {
    let bad = || Error::new(ErrorKind::WidgetButtonUrlInvalid);
    if text.chars().count() > MAX_WIDGET_URL_CHARS || text.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(bad());
    }
    let url = url::Url::parse(text).map_err(|_| bad())?;
    let ok = matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some_and(|h| !h.is_empty())
        && url.username().is_empty()
        && url.password().is_none();
    if ok { Ok(()) } else { Err(bad()) }
}

#[derive(Deserialize)]
struct LegacyClaims {
    sub: String,
    /// Checked here against the service's clock (not the system's), like every other time rule.
    exp: Option<u64>,
    nbf: Option<u64>,
}

impl Service {
    /// Create a partner in an environment and hand out its keys.
    pub fn create_partner(&self, name: &str, environment: Environment) -> Result<PartnerCredentials> {
        let n = name.trim().chars().count();
        if n == 0 || n > MAX_PARTNER_NAME_CHARS || name.chars().any(char::is_control) {
            return Err(Error::invalid_input("name", "must be 1 to 200 characters without control characters"));
        }
        let id = PartnerId::random();
        let (creds, hash) = new_keys(id, environment)?;
        let record = PartnerRecord {
            id,
            name: name.trim().to_owned(),
            environment,
            secret_key_hash: hash,
            publishable_key: creds.publishable_key.clone(),
            widget_text: None,
            widget_button_url: None,
            two_factor_waived: false,
            created_at: self.now(),
            widget_origins: Vec::new(),
            widget_approved: false,
            secret_key_last4: Some(creds.secret_key.last4()),
            previous_key: None,
        };
        self.store().insert_partner(&record).map_err(Self::internal)?;
        Ok(creds)
    }

    /// Replace a partner's secret and publishable keys (an operator action, audit-logged). The
    /// old keys stop working at once, a rolled key still in its overlap too.
    pub fn rotate_keys(&self, operator: &str, partner: &PartnerId) -> Result<PartnerCredentials> {
        let actor = Self::operator(operator)?;
        self.partner_record(partner)?;
        let mut issued = None;
        let found = self
            .store()
            .update_partner(partner, &mut |p, effects| match new_keys(p.id, p.environment) {
                Ok((creds, hash)) => {
                    p.secret_key_hash = hash;
                    p.secret_key_last4 = Some(creds.secret_key.last4());
                    p.previous_key = None;
                    p.publishable_key = creds.publishable_key.clone();
                    issued = Some(Ok(creds));
                    effects.audit(self.draft(&actor, event::KEYS_ROTATED, None, Map::new()));
                    true
                }
                Err(e) => {
                    issued = Some(Err(e));
                    false
                }
            })
            .map_err(Self::internal)?;
        // After the change: lookups that read the old key before it cannot store it any more.
        self.auth_cache().clear();
        if !found {
            return Err(ErrorKind::PartnerNotFound.into());
        }
        issued.unwrap_or_else(|| Err(ErrorKind::Internal.into()))
    }

    /// Roll the partner's secret key (SPEC 11, the dashboard's "Roll secret key"): a new key
    /// works at once and is returned, to show once; the old one keeps working until `overlap`
    /// from now (or stops at once for [`KeyOverlap::Now`]). A partner holds at most two secret
    /// keys: a key still in the overlap of an earlier roll stops now. The publishable key stays.
    /// Audited `partner.key_rolled` (`expiresIn`) as `actor` (the dashboard's member; the
    /// caller decides who may roll).
    pub fn roll_secret_key(&self, actor: &Actor, partner: &PartnerId, overlap: KeyOverlap) -> Result<RolledKey> {
        let now = self.now();
        let mut issued = None;
        let found = self
            .store()
            .update_partner(partner, &mut |p, effects| match new_keys(p.id, p.environment) {
                Ok((creds, hash)) => {
                    let previous = (overlap != KeyOverlap::Now).then(|| PreviousKey {
                        hash: p.secret_key_hash,
                        last4: p.secret_key_last4.clone(),
                        expires_at: now.saturating_add(overlap.secs()),
                    });
                    let info =
                        previous.as_ref().map(|k| PreviousKeyInfo { last4: k.last4.clone(), expires_at: k.expires_at });
                    p.previous_key = previous;
                    p.secret_key_hash = hash;
                    p.secret_key_last4 = Some(creds.secret_key.last4());
                    let d = details([("expiresIn", Value::from(overlap.as_str()))]);
                    effects.audit(self.draft(actor, event::KEY_ROLLED, None, d));
                    issued = Some(Ok(RolledKey { secret_key: creds.secret_key.clone(), previous: info }));
                    true
                }
                Err(e) => {
                    issued = Some(Err(e));
                    false
                }
            })
            .map_err(Self::internal)?;
        // A key cached before the roll is looked up again, with its expiry.
        self.auth_cache().clear();
        if !found {
            return Err(ErrorKind::PartnerNotFound.into());
        }
        issued.unwrap_or_else(|| Err(ErrorKind::Internal.into()))
    }

    /// A partner by id.
    pub fn partner(&self, partner: &PartnerId) -> Result<Partner> {
        self.partner_record(partner).map(Partner::from)
    }

    pub(crate) fn partner_record(&self, partner: &PartnerId) -> Result<PartnerRecord> {
        self.store().partner(partner).map_err(Self::internal)?.ok_or_else(|| ErrorKind::PartnerNotFound.into())
    }

    /// How many partners the store holds.
    pub fn partner_count(&self) -> Result<u64> {
        self.store().count_partners().map_err(Self::internal)
    }

    /// Authenticate a bearer value: a secret key of this service's environment, or (when a JWT
    /// secret is configured) a legacy HS256 JWT whose `sub` is the partner id. Publishable
    /// keys, other environments' keys and everything else are [`ErrorKind::Unauthorized`].
    pub fn authenticate(&self, bearer: &str) -> Result<Authenticated> {
        let unauthorized = || Error::new(ErrorKind::Unauthorized);
        let env = self.config().environment;
        if bearer.starts_with("sk_") {
            let prefix = format!("sk_{}_", env.as_str());
            if !bearer.starts_with(&prefix) {
                return Err(unauthorized());
            }
            let hash = secret_key_hash(bearer);
            let now = self.now();
            let generation = match self.auth_cache().get(&hash, now) {
                Ok(partner_id) => return Ok(Authenticated { partner_id, method: AuthMethod::SecretKey }),
                Err(generation) => generation,
            };
            let partner = self
                .store()
                .partner_by_secret_key_hash(&hash)
                .map_err(Self::internal)?
                .filter(|p| p.environment == env)
                .ok_or_else(unauthorized)?;
            // The current key, or a rolled one until its expiry (refused from that second on).
            let until = if partner.secret_key_hash == hash {
                None
            } else {
                match &partner.previous_key {
                    Some(k) if k.hash == hash && now < k.expires_at => Some(k.expires_at),
                    _ => return Err(unauthorized()),
                }
            };
            self.auth_cache().insert(hash, partner.id, until, generation);
            return Ok(Authenticated { partner_id: partner.id, method: AuthMethod::SecretKey });
        }
        let Some(key) = self.jwt_key() else {
            return Err(unauthorized());
        };
        if bearer.starts_with("pk_") {
            return Err(unauthorized());
        }
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        validation.required_spec_claims = HashSet::from(["sub".to_owned()]);
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.leeway = 0;
        let claims = jsonwebtoken::decode::<LegacyClaims>(bearer, key, &validation).map_err(|_| unauthorized())?;
        let now = self.now();
        if claims.claims.exp.is_some_and(|exp| now >= exp) || claims.claims.nbf.is_some_and(|nbf| now < nbf) {
            return Err(unauthorized());
        }
        let id = PartnerId::parse(&claims.claims.sub).map_err(|_| unauthorized())?;
        let partner = self.store().partner(&id).map_err(Self::internal)?.filter(|p| p.environment == env);
        let partner = partner.ok_or_else(unauthorized)?;
        Ok(Authenticated { partner_id: partner.id, method: AuthMethod::LegacyJwt })
    }

    /// Set the confirmation-screen button text; returns the stored value.
    pub fn set_widget_text(&self, partner: &PartnerId, text: &str) -> Result<String> {
        validate_widget_text(text)?;
        self.update_partner_field(partner, &Actor::Partner, settings_changed("widgetText"), |p| {
            p.widget_text = Some(text.to_owned());
        })?;
        Ok(text.to_owned())
    }

    /// The confirmation-screen button text, if set.
    pub fn widget_text(&self, partner: &PartnerId) -> Result<Option<String>> {
        Ok(self.partner_record(partner)?.widget_text)
    }

    /// Set the confirmation-screen button URL; returns the stored value.
    pub fn set_widget_button_url(&self, partner: &PartnerId, url: &str) -> Result<String> {
        validate_widget_button_url(url)?;
        self.update_partner_field(partner, &Actor::Partner, settings_changed("widgetButtonURL"), |p| {
            p.widget_button_url = Some(url.to_owned());
        })?;
        Ok(url.to_owned())
    }

    /// The confirmation-screen button URL, if set.
    pub fn widget_button_url(&self, partner: &PartnerId) -> Result<Option<String>> {
        Ok(self.partner_record(partner)?.widget_button_url)
    }

    /// Replace the origins allowed to embed the partner's widget (SPEC section 6.2): at most 20,
    /// each `http(s)://host[:port]`, https only in production; returns them canonical. An
    /// empty list removes them all.
    pub fn set_widget_origins<S: AsRef<str>>(&self, partner: &PartnerId, origins: &[S]) -> Result<Vec<String>> {
        let environment = self.partner_record(partner)?.environment;
        let origins = crate::widget::origins::check_origins(origins, environment)?;
        self.update_partner_field(partner, &Actor::Partner, settings_changed("widgetOrigins"), |p| {
            p.widget_origins.clone_from(&origins);
        })?;
        Ok(origins)
    }

    /// Change several widget settings at once, as `actor` (the dashboard's member): each
    /// `Some` field is set (`Some(None)` clears a text or URL), all checked before anything is
    /// written (errors name the field), then written in one transaction with one
    /// `widget.settings_changed` row per setting that changed.
    pub fn update_widget_settings(
        &self,
        actor: &Actor,
        partner: &PartnerId,
        change: &WidgetSettings<'_>,
    ) -> Result<()> {
        if let Some(Some(text)) = change.text {
            validate_widget_text(text)?;
        }
        if let Some(Some(url)) = change.button_url {
            validate_widget_button_url(url)?;
        }
        let environment = self.partner_record(partner)?.environment;
        let origins = change.origins.map(|o| crate::widget::origins::check_origins(o, environment)).transpose()?;
        let found = self
            .store()
            .update_partner(partner, &mut |p, effects| {
                let mut changed = Vec::new();
                if let Some(text) = change.text
                    && p.widget_text.as_deref() != text
                {
                    p.widget_text = text.map(str::to_owned);
                    changed.push("widgetText");
                }
                if let Some(url) = change.button_url
                    && p.widget_button_url.as_deref() != url
                {
                    p.widget_button_url = url.map(str::to_owned);
                    changed.push("widgetButtonURL");
                }
                if let Some(origins) = &origins
                    && p.widget_origins != *origins
                {
                    p.widget_origins.clone_from(origins);
                    changed.push("widgetOrigins");
                }
                for field in &changed {
                    let (event, d) = settings_changed(field);
                    effects.audit(self.draft(actor, event, None, d));
                }
                !changed.is_empty()
            })
            .map_err(Self::internal)?;
        if found { Ok(()) } else { Err(ErrorKind::PartnerNotFound.into()) }
    }

    /// The origins allowed to embed the partner's widget.
    pub fn widget_origins(&self, partner: &PartnerId) -> Result<Vec<String>> {
        Ok(self.partner_record(partner)?.widget_origins)
    }

    /// Approve (or withdraw the approval of) a partner's production widget: an operator action,
    /// audit-logged. Sandbox widgets work without it.
    pub fn set_widget_approval(&self, operator: &str, partner: &PartnerId, approved: bool) -> Result<()> {
        let actor = Self::operator(operator)?;
        let event = if approved { event::WIDGET_APPROVED } else { event::WIDGET_UNAPPROVED };
        self.update_partner_field(partner, &actor, (event, Map::new()), |p| p.widget_approved = approved)
    }

    /// The partner a publishable key belongs to, for the widget's public routes (the key is
    /// not a credential: this only says which partner's public settings to show).
    pub fn partner_by_publishable_key(&self, key: &str) -> Result<Option<Partner>> {
        if !key.starts_with("pk_") || key.len() > 200 {
            return Ok(None);
        }
        let found = self.store().partner_by_publishable_key(key).map_err(Self::internal)?;
        Ok(found.filter(|p| p.environment == self.config().environment).map(Partner::from))
    }

    /// Waive (or restore) the KYC 2FA requirement for a partner: an operator action,
    /// audit-logged, never a partner API call.
    pub fn set_2fa_waiver(&self, operator: &str, partner: &PartnerId, waived: bool) -> Result<()> {
        let actor = Self::operator(operator)?;
        let event = if waived { event::WAIVER_SET } else { event::WAIVER_CLEARED };
        self.update_partner_field(partner, &actor, (event, Map::new()), |p| p.two_factor_waived = waived)
    }

    /// Change a partner setting and record `audit` (event and details) in the same transaction.
    fn update_partner_field(
        &self,
        partner: &PartnerId,
        actor: &Actor,
        audit: (&'static str, Map<String, Value>),
        mut change: impl FnMut(&mut PartnerRecord),
    ) -> Result<()> {
        let found = self
            .store()
            .update_partner(partner, &mut |p, effects| {
                change(p);
                effects.audit(self.draft(actor, audit.0, None, audit.1.clone()));
                true
            })
            .map_err(Self::internal)?;
        if found { Ok(()) } else { Err(ErrorKind::PartnerNotFound.into()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widget_text_rules() {
        assert!(validate_widget_text("Back to shop").is_ok());
        assert!(validate_widget_text(&"é".repeat(64)).is_ok());
        for bad in ["", "tab\there", "nul\0", &"x".repeat(65)] {
            assert_eq!(validate_widget_text(bad).unwrap_err().kind(), ErrorKind::WidgetTextInvalid);
        }
    }

    #[test]
    fn widget_url_rules() {
        assert!(validate_widget_button_url("https://shop.example.com/done?x=1").is_ok());
        assert!(validate_widget_button_url("http://localhost:3000/").is_ok());
        let long = format!("https://a.example/{}", "x".repeat(2048));
        for bad in [
            "",
            "/relative",
            "shop.example.com",
            "ftp://example.com/",
            "javascript:alert(1)",
            "https://user:pw@example.com/",
            "https://user@example.com/",
            " https://example.com/",
            "https://example.com/\n",
            long.as_str(),
        ] {
            assert_eq!(validate_widget_button_url(bad).unwrap_err().kind(), ErrorKind::WidgetButtonUrlInvalid, "{bad}");
        }
    }

    #[test]
    fn bearer() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer "), None);
        assert_eq!(bearer_token("Bearer"), None);
    }
}

/// The `widget.settings_changed` event of one API field.
fn settings_changed(field: &str) -> (&'static str, Map<String, Value>) {
    (event::WIDGET_SETTINGS_CHANGED, details([("field", Value::from(field))]))
}

/// Secret keys that authenticated recently, by hash (see [`Config::auth_cache_ttl`]). Only
/// successes are kept, so a wrong key always costs a store lookup; the map is bounded and
/// starts over when full. A generation number, bumped by [`clear`](Self::clear), keeps a
/// lookup that raced with a key rotation from putting the old key back.
///
/// [`Config::auth_cache_ttl`]: crate::Config::auth_cache_ttl
pub(crate) struct AuthCache {
    ttl: Duration,
    inner: Mutex<AuthEntries>,
}

#[derive(Default)]
struct AuthEntries {
    generation: u64,
    /// The partner, when it was remembered, and (for a rolled key) the Unix second from which
    /// the key is refused.
    by_hash: HashMap<[u8; 32], (PartnerId, Instant, Option<u64>)>,
}

/// Most keys remembered at once.
const AUTH_CACHE_CAPACITY: usize = 4096;

impl AuthCache {
    pub(crate) fn new(ttl: Duration) -> Self {
        Self { ttl, inner: Mutex::new(AuthEntries::default()) }
    }

    fn inner(&self) -> MutexGuard<'_, AuthEntries> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The partner whose key hashes to `hash`, if remembered, fresh and (for a rolled key) not
    /// expired at `now`; otherwise the generation to hand to [`insert`](Self::insert) after
    /// asking the store.
    pub(crate) fn get(&self, hash: &[u8; 32], now: u64) -> std::result::Result<PartnerId, u64> {
        if self.ttl.is_zero() {
            return Err(0);
        }
        let mut inner = self.inner();
        match inner.by_hash.get(hash) {
            Some(&(partner, at, until)) if at.elapsed() < self.ttl && until.is_none_or(|u| now < u) => Ok(partner),
            Some(_) => {
                inner.by_hash.remove(hash);
                Err(inner.generation)
            }
            None => Err(inner.generation),
        }
    }

    /// Remember a store answer, unless the cache was cleared since `generation` was read.
    pub(crate) fn insert(&self, hash: [u8; 32], partner: PartnerId, until: Option<u64>, generation: u64) {
        if self.ttl.is_zero() {
            return;
        }
        let mut inner = self.inner();
        if inner.generation != generation {
            return;
        }
        if inner.by_hash.len() >= AUTH_CACHE_CAPACITY {
            inner.by_hash.clear();
        }
        inner.by_hash.insert(hash, (partner, Instant::now(), until));
    }

    /// Forget every key, and every lookup still in flight.
    pub(crate) fn clear(&self) {
        let mut inner = self.inner();
        inner.generation = inner.generation.wrapping_add(1);
        inner.by_hash.clear();
    }
}
