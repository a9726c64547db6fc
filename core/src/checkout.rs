//! The widget's purchase flow (SPEC section 6.3): widget sessions, email sign-in, the 2FA step
//! and orders.
//!
//! - A session is a random 256-bit bearer token (`ws_` + 43 base64url characters) held in the
//!   widget page's memory; the store keeps only its SHA-256. It is bound to the partner whose
//!   publishable key opened it and to the embedding page's origin, and dies 30 minutes after
//!   its last use.
//! - Sign-in sends a 6-digit code for an email address ([`Service::request_sign_in_code`]
//!   returns it; the caller delivers it, or shows it in sandbox). A code lives 10 minutes, takes
//!   5 wrong tries, and only the session that asked for it can use it; an email gets at most 3
//!   codes per 10 minutes. Every answer is the same whether the email is known or not. A
//!   signed-in email is a contact of the partner: one contact id per partner and email, stored.
//! - The 2FA step applies section 2: a contact with 2FA enabled verifies a code (window,
//!   replay, throttle, lock); a KYC-passed contact without 2FA at a partner without a waiver
//!   sets it up (create, then enable) before buying.
//! - Orders are validated as widget options (section 4) and stored. In sandbox they complete at
//!   once at a simulated price; production has no payment provider here and refuses them.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::audit::Actor;
use crate::crypto::fill_random;
use crate::error::{Error, ErrorKind, Result};
use crate::ids::{ContactId, OrderId, PartnerId};
use crate::lifecycle::TwoFactorSetup;
use crate::recovery::{Factor, RecoveryCodes};
#[cfg(doc)]
use crate::service::Config;
use crate::service::Service;
use crate::store::{Effects, OrderRecord, OrderStatus, SessionRecord, WebhookEvent};
use crate::token::Token;
use crate::vocab::Environment;
use crate::widget::origins::origin_allowed;
use crate::widget::{Target, WidgetConfig, validate};

/// A session dies this many seconds after its last use, by default ([`Config::session_idle_secs`]).
pub const SESSION_IDLE_SECS: u64 = 1800;
/// A sign-in code lives this many seconds, by default ([`Config::sign_in_code_ttl_secs`]).
pub const SIGN_IN_CODE_TTL_SECS: u64 = 600;
/// Wrong tries a sign-in code takes; the last one kills it.
pub const SIGN_IN_CODE_TRIES: u32 = 5;
/// Codes one email may be sent per [`SIGN_IN_WINDOW_SECS`].
pub const SIGN_IN_CODES_PER_WINDOW: usize = 3;
/// The window of [`SIGN_IN_CODES_PER_WINDOW`].
pub const SIGN_IN_WINDOW_SECS: u64 = 600;
/// The most orders one page of [`Service::orders`] holds.
pub const MAX_ORDERS_PAGE: usize = 100;
/// The longest email address accepted (RFC 5321's path limit less the brackets).
pub const MAX_EMAIL_CHARS: usize = 254;

const SESSION_PREFIX: &str = "ws_";
const SESSION_TOKEN_BYTES: usize = 32;

/// A widget session's bearer token. Prints redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionToken(Zeroizing<String>);

impl SessionToken {
    /// The token text (`ws_...`), for the `Authorization: Bearer` header.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SessionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionToken(<redacted>)")
    }
}

/// What the signed-in contact must do about 2FA before buying.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TwoFactorStep {
    /// Nothing: 2FA is not enabled and not required.
    None,
    /// Set it up (create, then enable): the contact passed KYC and the partner has no waiver.
    Setup,
    /// Enter a code: 2FA is enabled and not yet passed in this session.
    Verify,
    /// Passed in this session.
    Passed,
}

impl TwoFactorStep {
    /// `"none"`, `"setup"`, `"verify"` or `"passed"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Setup => "setup",
            Self::Verify => "verify",
            Self::Passed => "passed",
        }
    }
}

/// Where a widget session stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionState {
    /// The partner whose widget it is.
    pub partner_id: PartnerId,
    /// The partner's environment.
    pub environment: Environment,
    /// The embedding page's origin (`""` at the top level).
    pub origin: String,
    /// The signed-in email, normalised.
    pub email: Option<String>,
    /// The signed-in contact.
    pub contact_id: Option<ContactId>,
    /// The contact passed KYC.
    pub kyc_passed: bool,
    /// The 2FA step, once signed in.
    pub two_factor: Option<TwoFactorStep>,
    /// Signed in, the 2FA step is done or not needed, and no purchase hold.
    pub may_purchase: bool,
    /// Until when purchases are on hold after a 2FA recovery or reset (Unix seconds).
    pub purchase_hold_until: Option<u64>,
    /// Unused recovery codes of the signed-in contact (0 when 2FA is off).
    pub recovery_codes_remaining: u32,
}

impl SessionState {
    /// Whether an email signed in.
    pub fn signed_in(&self) -> bool {
        self.contact_id.is_some()
    }
}

/// A sign-in code to deliver to the email's owner. Prints redacted.
pub struct SignInCode {
    /// The 6 digits.
    pub code: Zeroizing<String>,
    /// Seconds it stays valid.
    pub expires_in: u64,
}

impl fmt::Debug for SignInCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignInCode").field("expires_in", &self.expires_in).finish_non_exhaustive()
    }
}

/// What the buyer asks for: the review screen's values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderRequest {
    /// Coin symbol (`btc`).
    pub coin: String,
    /// Amount to pay (`"25"`, `"25.50"`).
    pub amount: String,
    /// Currency (`usd`, `eur`, `gbp`).
    pub currency: String,
    /// Receive address for `coin`.
    pub address: String,
}

/// A widget order; see [`OrderRecord`].
pub type Order = OrderRecord;

/// An order's webhook message: `data` is the order as `GET /v1/widget/orders/{id}` shows it now.
fn order_event(event: &str, o: &Order) -> WebhookEvent {
    let id = format!("msg_{}", uuid::Uuid::now_v7().simple());
    WebhookEvent::new(id, event, o.updated_at, &order_json(o))
}

/// An order as every surface shows it (the HTTP API, the C ABI's JSON, webhooks): `{"orderId",
/// "contactId", "coin", "amount", "currency", "address", "price", "quantity", "status",
/// "createdAt", "updatedAt"}`, times in Unix seconds.
pub fn order_json(o: &Order) -> Value {
    json!({
        "orderId": o.id.to_string(),
        "contactId": o.contact_id.to_string(),
        "coin": o.coin,
        "amount": o.amount,
        "currency": o.currency,
        "address": o.address,
        "price": o.price,
        "quantity": o.quantity,
        "status": o.status.as_str(),
        "createdAt": o.created_at,
        "updatedAt": o.updated_at,
    })
}

/// One page of a contact's orders, newest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderPage {
    /// The orders.
    pub orders: Vec<Order>,
    /// Pass as `after` for the next page; `None` on the last page.
    pub next: Option<OrderId>,
}

/// Normalise an email address for sign-in and look-up: surrounding ASCII white space removed,
/// lower-cased; then it must be `local@domain` with a dotted domain, no white space or control
/// characters, at most 254 characters (64 before the `@`). Else a 400 naming `email`.
pub fn normalize_email(text: &str) -> Result<String> {
    let email = text.trim_matches(|c: char| c.is_ascii_whitespace()).to_lowercase();
    let bad = || Error::invalid_input("email", "must be an email address such as name@example.com");
    if email.chars().count() > MAX_EMAIL_CHARS || email.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad());
    }
    let (local, domain) = email.split_once('@').ok_or_else(bad)?;
    let labels_ok = domain.split('.').all(|l| !l.is_empty() && !l.starts_with('-') && !l.ends_with('-'));
    if local.is_empty() || local.chars().count() > 64 || domain.contains('@') || !domain.contains('.') || !labels_ok {
        return Err(bad());
    }
    Ok(email)
}

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for part in parts {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part);
    }
    h.finalize().into()
}

fn token_hash(token: &str) -> Option<[u8; 32]> {
    let body = token.strip_prefix(SESSION_PREFIX)?;
    let ok = body.len() == 43 && body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    ok.then(|| sha256(&[token.as_bytes()]))
}

fn code_hash(session: &[u8; 32], email: &str, code: &str) -> [u8; 32] {
    sha256(&[b"rampart sign-in code", session, email.as_bytes(), code.as_bytes()])
}

/// A uniform 6-digit code from the OS CSPRNG.
fn random_code() -> Result<Zeroizing<String>> {
    loop {
        let mut b = [0u8; 4];
        fill_random(&mut b)?;
        let n = u32::from_be_bytes(b);
        // Reject the top sliver so every code is equally likely.
        if n < u32::MAX - u32::MAX % 1_000_000 {
            return Ok(Zeroizing::new(format!("{:06}", n % 1_000_000)));
        }
    }
}

/// The simulated sandbox price of one `coin` in `currency`, in hundredths.
pub fn sandbox_price_minor(coin: &str, currency: &str) -> u64 {
    let usd_cents: u64 = match coin {
        "btc" => 6_500_000,
        "eth" => 320_000,
        "ltc" => 8_000,
        "sol" => 15_000,
        "usdc" | "usdt" | "dai" => 100,
        _ => 10_000,
    };
    // Fixed sandbox rates: 1 USD = 0.92 EUR = 0.79 GBP.
    let per_hundred_usd = match currency {
        "eur" => 92,
        "gbp" => 79,
        _ => 100,
    };
    (usd_cents * per_hundred_usd / 100).max(1)
}

/// Hundredths as decimal text: `650000` gives `"6500.00"`.
fn minor_text(minor: u64) -> String {
    format!("{}.{:02}", minor / 100, minor % 100)
}

/// Coins bought for `amount_minor` at `price_minor`, truncated to 8 places, as decimal text
/// without trailing zeros (`"0.00076923"`, `"5"`).
fn quantity_text(amount_minor: u64, price_minor: u64) -> String {
    let units = u128::from(amount_minor) * 100_000_000 / u128::from(price_minor.max(1));
    let whole = units / 100_000_000;
    let frac = format!("{:08}", units % 100_000_000);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() { whole.to_string() } else { format!("{whole}.{frac}") }
}

impl Service {
    /// Open a widget session for the partner with this publishable key, embedded by `origin`
    /// (`None` or `""`: opened at the top level). 404 for an unknown key (or one of the other
    /// environment), 403 for an unapproved production widget or an origin the partner did not
    /// register (sandbox also takes `http://localhost` and `http://127.0.0.1` on any port).
    pub fn open_session(&self, publishable_key: &str, origin: Option<&str>) -> Result<(SessionToken, SessionState)> {
        let partner = self.partner_by_publishable_key(publishable_key)?.ok_or(ErrorKind::PartnerNotFound)?;
        let environment = partner.environment;
        if environment == Environment::Production && !partner.widget_approved {
            return Err(ErrorKind::WidgetNotApproved.into());
        }
        let origin = origin.unwrap_or_default();
        if !origin.is_empty() && !origin_allowed(origin, &partner.widget_origins, environment) {
            return Err(ErrorKind::OriginNotAllowed.into());
        }
        let now = self.now();
        self.store()
            .delete_sessions_idle_since(now.saturating_sub(self.config().session_idle_secs))
            .map_err(Self::internal)?;
        let mut bytes = Zeroizing::new([0u8; SESSION_TOKEN_BYTES]);
        fill_random(&mut bytes[..])?;
        let token = SessionToken(Zeroizing::new(format!("{SESSION_PREFIX}{}", URL_SAFE_NO_PAD.encode(&bytes[..]))));
        let record = SessionRecord {
            token_hash: sha256(&[token.as_str().as_bytes()]),
            partner_id: partner.id,
            origin: origin.to_owned(),
            created_at: now,
            last_seen_at: now,
            email: None,
            contact_id: None,
            two_factor_at: None,
        };
        self.store().insert_session(&record).map_err(Self::internal)?;
        let state = SessionState {
            partner_id: partner.id,
            environment,
            origin: record.origin,
            email: None,
            contact_id: None,
            kyc_passed: false,
            two_factor: None,
            may_purchase: false,
            purchase_hold_until: None,
            recovery_codes_remaining: 0,
        };
        Ok((token, state))
    }

    /// The live session of `token`, its idle clock restarted; 401 `session_expired` for an
    /// unknown, closed or idle token (they are not told apart).
    fn touch_session(&self, token: &str) -> Result<SessionRecord> {
        let hash = token_hash(token).ok_or(ErrorKind::SessionExpired)?;
        let now = self.now();
        let mut idle = false;
        let found = self
            .store()
            .update_session(&hash, &mut |s| {
                idle = now.saturating_sub(s.last_seen_at) >= self.config().session_idle_secs;
                if !idle {
                    s.last_seen_at = now;
                }
                !idle
            })
            .map_err(Self::internal)?;
        match found {
            Some(session) if !idle => Ok(session),
            Some(_) => {
                self.store().delete_session(&hash).map_err(Self::internal)?;
                Err(ErrorKind::SessionExpired.into())
            }
            None => Err(ErrorKind::SessionExpired.into()),
        }
    }

    fn signed_in_session(&self, token: &str) -> Result<(SessionRecord, ContactId)> {
        let session = self.touch_session(token)?;
        let contact = session.contact_id.ok_or(ErrorKind::SignInRequired)?;
        Ok((session, contact))
    }

    fn session_state_of(&self, session: &SessionRecord) -> Result<SessionState> {
        let partner = self.partner_record(&session.partner_id)?;
        let mut state = SessionState {
            partner_id: session.partner_id,
            environment: partner.environment,
            origin: session.origin.clone(),
            email: session.email.clone(),
            contact_id: session.contact_id,
            kyc_passed: false,
            two_factor: None,
            may_purchase: false,
            purchase_hold_until: None,
            recovery_codes_remaining: 0,
        };
        if let Some(contact) = session.contact_id {
            let rec = self.store().contact(&session.partner_id, &contact).map_err(Self::internal)?.unwrap_or_default();
            let step = if rec.enabled {
                if session.two_factor_at.is_some() { TwoFactorStep::Passed } else { TwoFactorStep::Verify }
            } else if rec.kyc_passed && !partner.two_factor_waived {
                TwoFactorStep::Setup
            } else {
                TwoFactorStep::None
            };
            // The KYC rule shows as the setup step; the hold applies besides it.
            let hold = crate::recovery::hold_of(&rec, self.now());
            state.kyc_passed = rec.kyc_passed;
            state.two_factor = Some(step);
            state.purchase_hold_until = hold;
            state.recovery_codes_remaining = crate::recovery::remaining(&rec);
            state.may_purchase = matches!(step, TwoFactorStep::None | TwoFactorStep::Passed) && hold.is_none();
        }
        Ok(state)
    }

    /// Where the session stands (restarting its idle clock).
    pub fn session_state(&self, token: &str) -> Result<SessionState> {
        let session = self.touch_session(token)?;
        self.session_state_of(&session)
    }

    /// Sign out: the token stops working. An unknown, closed or idle token is 401
    /// `session_expired`, as everywhere.
    pub fn close_session(&self, token: &str) -> Result<()> {
        let session = self.touch_session(token)?;
        self.store().delete_session(&session.token_hash).map_err(Self::internal)?;
        Ok(())
    }

    /// A new sign-in code for `email`, usable only by this session, replacing any earlier one.
    /// The caller delivers it. 400 for a malformed email; 429 with the seconds to wait after 3
    /// codes to one email in 10 minutes.
    pub fn request_sign_in_code(&self, token: &str, email: &str) -> Result<SignInCode> {
        let session = self.touch_session(token)?;
        let email = normalize_email(email)?;
        let code = random_code()?;
        let hash = code_hash(&session.token_hash, &email, &code);
        let now = self.now();
        let ttl = self.config().sign_in_code_ttl_secs;
        let mut wait = None;
        self.store()
            .update_sign_in(&session.partner_id, &email, &mut |r| {
                r.sent_at.retain(|&t| now.saturating_sub(t) < SIGN_IN_WINDOW_SECS);
                if r.sent_at.len() >= SIGN_IN_CODES_PER_WINDOW {
                    let oldest = r.sent_at.iter().copied().min().unwrap_or(now);
                    wait = Some((oldest + SIGN_IN_WINDOW_SECS).saturating_sub(now).max(1));
                    return false;
                }
                wait = None;
                r.sent_at.push(now);
                r.code_hash = Some(hash);
                r.expires_at = now + ttl;
                r.tries = 0;
                true
            })
            .map_err(Self::internal)?;
        match wait {
            Some(seconds) => Err(Error::sign_in_throttled(seconds)),
            None => Ok(SignInCode { code, expires_in: ttl }),
        }
    }

    /// Sign in with the code sent to `email`. 401 `sign_in_code_failed` for a wrong code (the
    /// fifth wrong one kills it), 401 `sign_in_code_expired` when no code is live (expired,
    /// used, killed or never sent). A code sent to another session does not match here: it
    /// counts as a wrong try.
    pub fn sign_in(&self, token: &str, email: &str, code: &str) -> Result<SessionState> {
        let session = self.touch_session(token)?;
        let email = normalize_email(email)?;
        let code = code.trim_matches(|c: char| c.is_ascii_whitespace());
        let given = code_hash(&session.token_hash, &email, code);
        let well_formed = code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit());
        let now = self.now();
        #[derive(Clone, Copy)]
        enum Outcome {
            Accepted,
            Wrong,
            Dead,
        }
        let mut outcome = Outcome::Dead;
        self.store()
            .update_sign_in(&session.partner_id, &email, &mut |r| {
                let Some(live) = r.code_hash else {
                    outcome = Outcome::Dead;
                    return false;
                };
                if now >= r.expires_at {
                    outcome = Outcome::Dead;
                    r.code_hash = None;
                } else if well_formed && bool::from(live.ct_eq(&given)) {
                    outcome = Outcome::Accepted;
                    r.code_hash = None;
                    r.tries = 0;
                } else {
                    outcome = Outcome::Wrong;
                    r.tries = r.tries.saturating_add(1);
                    if r.tries >= SIGN_IN_CODE_TRIES {
                        r.code_hash = None;
                    }
                }
                true
            })
            .map_err(Self::internal)?;
        match outcome {
            Outcome::Dead => return Err(ErrorKind::SignInCodeExpired.into()),
            Outcome::Wrong => return Err(ErrorKind::SignInCodeFailed.into()),
            Outcome::Accepted => {}
        }
        let contact =
            self.store().contact_for_email(&session.partner_id, &email, ContactId::random()).map_err(Self::internal)?;
        let signed = self.update_session(&session.token_hash, |s| {
            s.email = Some(email.clone());
            s.contact_id = Some(contact);
            s.two_factor_at = None;
        })?;
        self.session_state_of(&signed)
    }

    fn update_session(&self, hash: &[u8; 32], mut change: impl FnMut(&mut SessionRecord)) -> Result<SessionRecord> {
        let updated = self
            .store()
            .update_session(hash, &mut |s| {
                change(s);
                true
            })
            .map_err(Self::internal)?;
        updated.ok_or_else(|| ErrorKind::SessionExpired.into())
    }

    /// Sandbox only: mark the signed-in contact as KYC-passed (audited as `kyc.marked` with
    /// actor `contact`), so the 2FA setup rule can be tried. 403 in production.
    pub fn session_mark_kyc(&self, token: &str) -> Result<SessionState> {
        let (session, contact) = self.signed_in_session(token)?;
        if self.config().environment != Environment::Sandbox {
            return Err(ErrorKind::SandboxOnly.into());
        }
        self.set_kyc_passed_as(&Actor::Contact, &session.partner_id, &contact, true)?;
        self.session_state_of(&session)
    }

    /// Create 2FA for the signed-in contact (QR and manual key), labelled with their email.
    /// The answers of [`Service::create_2fa`].
    pub fn session_create_2fa(&self, token: &str) -> Result<TwoFactorSetup> {
        let (session, contact) = self.signed_in_session(token)?;
        let label = session.email.clone().unwrap_or_else(|| contact.to_string());
        self.create_2fa_as(&Actor::Contact, &session.partner_id, &contact, None, &label)
    }

    /// Enable the created 2FA with a code from it; 2FA then counts as passed in this session.
    /// The answers of [`Service::enable_2fa`], with the new recovery codes to show once.
    pub fn session_enable_2fa(&self, token: &str, code: impl Into<Token>) -> Result<(SessionState, RecoveryCodes)> {
        let (session, contact) = self.signed_in_session(token)?;
        let codes = self.enable_2fa_as(&Actor::Contact, &session.partner_id, &contact, code.into())?;
        let now = self.now();
        let passed = self.update_session(&session.token_hash, |s| s.two_factor_at = Some(now))?;
        Ok((self.session_state_of(&passed)?, codes))
    }

    /// Pass the 2FA step with an authenticator code, or recover with a recovery code: that
    /// disables 2FA (SPEC 8.3: audited with actor `contact`, the purchase hold starts), after
    /// which the step is setup when 2FA is required. The answers of [`Service::verify_2fa`] and
    /// [`Service::disable_2fa`], with a rejected code as 401 "Google 2FA failed".
    pub fn session_verify_2fa(&self, token: &str, factor: impl Into<Factor>) -> Result<SessionState> {
        let (session, contact) = self.signed_in_session(token)?;
        let factor = factor.into();
        if let Factor::RecoveryCode(_) = factor {
            self.disable_2fa_as(&Actor::Contact, &session.partner_id, &contact, factor)?;
            let recovered = self.update_session(&session.token_hash, |s| s.two_factor_at = None)?;
            return self.session_state_of(&recovered);
        }
        if !self.verify_2fa_as(&Actor::Contact, &session.partner_id, &contact, factor)?.is_accepted() {
            return Err(ErrorKind::TokenFailed.into());
        }
        let now = self.now();
        let passed = self.update_session(&session.token_hash, |s| s.two_factor_at = Some(now))?;
        self.session_state_of(&passed)
    }

    /// New recovery codes for the signed-in contact, proven by an authenticator code. The
    /// answers of [`Service::regenerate_recovery_codes`].
    pub fn session_regenerate_recovery_codes(&self, token: &str, code: impl Into<Token>) -> Result<RecoveryCodes> {
        let (session, contact) = self.signed_in_session(token)?;
        self.regenerate_recovery_codes_as(&Actor::Contact, &session.partner_id, &contact, code.into())
    }

    /// Buy: the request is checked as widget options under `widget` (400 naming the first
    /// failing field: `coin`, `amount`, `currency` or `address`, with the option rule's
    /// message, e.g. "address is not valid: The address is empty."), then the
    /// 2FA step (403), then the environment: production refuses (503, nothing stored); sandbox
    /// stores the order and completes it at once at the simulated price.
    pub fn place_order(&self, token: &str, request: &OrderRequest, widget: &WidgetConfig) -> Result<Order> {
        let (session, contact) = self.signed_in_session(token)?;
        let partner = self.partner_record(&session.partner_id)?;
        if request.coin.contains(',') {
            return Err(Error::invalid_input("coin", "must be one coin symbol"));
        }
        let mut options = Map::new();
        options.insert("publicKey".into(), Value::String(partner.publishable_key.clone()));
        options.insert("tokens".into(), Value::String(request.coin.clone()));
        options.insert("amount".into(), Value::String(request.amount.clone()));
        options.insert("currencies".into(), Value::String(request.currency.clone()));
        options.insert("receiveAddress".into(), json!({ request.coin.clone(): request.address.clone() }));
        let validation = validate(&options, Target::Url, Some(partner.environment), widget);
        if let Some(issue) = validation.errors.first() {
            // Named by the request's own fields, not the widget options they were checked as.
            let field = match issue.path.split(['.', '[']).next().unwrap_or_default() {
                "tokens" => "coin",
                "currencies" => "currency",
                "receiveAddress" => "address",
                "amount" => "amount",
                _ => "order",
            };
            return Err(Error::invalid_input(field, &format!("is not valid: {}", issue.message)));
        }
        let Some(checked) = validation.options else {
            return Err(Error::invalid_input("options", "are not valid"));
        };
        let state = self.session_state_of(&session)?;
        if !matches!(state.two_factor, Some(TwoFactorStep::None | TwoFactorStep::Passed)) {
            return Err(ErrorKind::TwoFactorRequired.into());
        }
        if let Some(until) = state.purchase_hold_until {
            return Err(Error::purchase_hold(&crate::recovery::rfc3339(until)));
        }
        if partner.environment == Environment::Production {
            return Err(ErrorKind::PurchasesUnavailable.into());
        }
        let amount_minor = crate::widget::parse_amount(checked.amount())
            .map_err(|_| Error::invalid_input("amount", "is not a valid amount"))?;
        let currency = checked.currency().as_str();
        let price = sandbox_price_minor(&request.coin, currency);
        let now = self.now();
        let mut order = OrderRecord {
            id: OrderId::random(),
            partner_id: partner.id,
            contact_id: contact,
            coin: request.coin.clone(),
            amount: checked.amount().to_owned(),
            currency: currency.to_owned(),
            address: checked.receive_address(&request.coin).unwrap_or(&request.address).to_owned(),
            price: minor_text(price),
            quantity: quantity_text(amount_minor, price),
            status: OrderStatus::Created,
            created_at: now,
            updated_at: now,
        };
        // The order and its `order.created` message in one transaction (SPEC 10: a stored order
        // always has its events, one not stored never does).
        let mut created = Effects::default();
        created.webhook(order_event("order.created", &order));
        self.store().insert_order(&order, &created).map_err(Self::internal)?;
        // Sandbox settles at once.
        let settled = self
            .store()
            .update_order(&order.partner_id, &order.id, &mut |o, effects| {
                o.status = OrderStatus::Completed;
                o.updated_at = now;
                effects.webhook(order_event("order.completed", o));
                true
            })
            .map_err(Self::internal)?;
        if settled {
            order.status = OrderStatus::Completed;
        }
        Ok(order)
    }

    /// A partner's order (404 `order_not_found` for an unknown id or another partner's).
    pub fn order(&self, partner: &PartnerId, id: &OrderId) -> Result<Order> {
        match self.store().order(partner, id).map_err(Self::internal)? {
            Some(order) => Ok(order),
            None => {
                self.partner_record(partner)?;
                Err(ErrorKind::OrderNotFound.into())
            }
        }
    }

    /// Up to `limit` (1..=100) orders of a partner's contact, newest first, after the order
    /// `after` (the previous page's `next`; 404 `order_not_found` unless it is an order of
    /// this contact).
    pub fn orders(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        after: Option<&OrderId>,
        limit: usize,
    ) -> Result<OrderPage> {
        if !(1..=MAX_ORDERS_PAGE).contains(&limit) {
            return Err(Error::invalid_input("limit", "must be 1 to 100"));
        }
        self.partner_record(partner)?;
        let before = match after {
            None => None,
            Some(id) => match self.store().order(partner, id).map_err(Self::internal)? {
                Some(o) if o.contact_id == *contact => Some((o.created_at, o.id)),
                // Another contact's order reads as unknown: the cursor reveals nothing.
                _ => return Err(ErrorKind::OrderNotFound.into()),
            },
        };
        let mut orders =
            self.store().orders_for_contact(partner, contact, before, limit + 1).map_err(Self::internal)?;
        let more = orders.len() > limit;
        orders.truncate(limit);
        let next = if more { orders.last().map(|o| o.id) } else { None };
        Ok(OrderPage { orders, next })
    }

    /// The contact id of an email that signed in to the partner's widget (404
    /// `contact_not_found` when it never did; 400 for a malformed email).
    pub fn contact_by_email(&self, partner: &PartnerId, email: &str) -> Result<ContactId> {
        let email = normalize_email(email)?;
        self.partner_record(partner)?;
        self.store()
            .contact_by_email(partner, &email)
            .map_err(Self::internal)?
            .ok_or_else(|| ErrorKind::ContactNotFound.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails() {
        assert_eq!(normalize_email("  Alice@Example.COM \n").unwrap(), "alice@example.com");
        for bad in ["", "alice", "alice@", "@example.com", "a@b", "a b@example.com", "a@@example.com", "a@example..com"]
        {
            let e = normalize_email(bad).unwrap_err();
            assert_eq!(e.message(), "email must be an email address such as name@example.com", "{bad:?}");
        }
        assert!(normalize_email(&format!("{}@example.com", "a".repeat(65))).is_err());
        assert!(normalize_email(&format!("a@{}.com", "b".repeat(250))).is_err());
    }

    #[test]
    fn tokens_have_a_shape() {
        assert!(token_hash("ws_").is_none());
        assert!(token_hash(&format!("ws_{}", "A".repeat(43))).is_some());
        assert!(token_hash(&format!("ws_{}", "A".repeat(44))).is_none());
        assert!(token_hash(&format!("sk_{}", "A".repeat(43))).is_none());
        assert!(token_hash(&format!("ws_{}=", "A".repeat(42))).is_none());
    }

    #[test]
    fn codes_are_six_digits() {
        for _ in 0..200 {
            let c = random_code().unwrap();
            assert_eq!(c.len(), 6);
            assert!(c.bytes().all(|b| b.is_ascii_digit()));
        }
    }

    #[test]
    fn prices_and_quantities() {
        assert_eq!(sandbox_price_minor("btc", "usd"), 6_500_000);
        assert_eq!(sandbox_price_minor("btc", "eur"), 5_980_000);
        assert_eq!(minor_text(5_980_000), "59800.00");
        assert_eq!(quantity_text(500, 6_500_000), "0.00007692");
        assert_eq!(quantity_text(500, 100), "5");
        assert_eq!(quantity_text(2550, 100), "25.5");
    }
}
