//! The way back when an authenticator is lost (SPEC section 8): recovery codes (issued by
//! enable, hashed at rest, used once, their own throttle, regenerated with an authenticator
//! code), the operator's four-eyes reset, the support view of a contact, and the purchase hold.
//!
//! A code is 120 bits from the OS CSPRNG written as 24 Crockford base32 symbols in six groups
//! of four (`7KQ2-M9XD-...`). What is stored is SHA-256 over a fixed domain prefix, the partner
//! id, the contact id, the set id and the normalized code: at 120 bits a fast hash is enough
//! (NIST SP 800-63B look-up secrets), and binding the set id makes a replaced set's codes
//! worthless.

use std::fmt;
use std::sync::OnceLock;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::audit::{details, event};
use crate::crypto::fill_random;
use crate::error::{Error, ErrorKind, Result};
use crate::ids::{ContactId, PartnerId};
use crate::lifecycle::LOCK_AFTER;
use crate::service::Service;
use crate::store::{ContactRecord, RecoveryCodeSet, RecoveryCodeSlot};
use crate::token::Token;
use crate::vocab::Environment;

/// Codes in a set.
pub const RECOVERY_CODES: usize = 10;
/// Symbols in a code (120 bits).
pub const CODE_SYMBOLS: usize = 24;
/// Bytes of randomness in a code.
const CODE_BYTES: usize = 15;
/// Longest input looked at; anything longer does not verify.
pub const MAX_INPUT_BYTES: usize = 64;
/// The Crockford base32 alphabet codes are written in.
pub const ALPHABET: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// The widget tells a signed-in contact when this many codes or fewer remain.
pub const LOW_CODES: u32 = 3;
/// The purchase hold's default length (24 hours).
pub const DEFAULT_HOLD_SECS: u64 = 86_400;
/// The longest purchase hold (7 days).
pub const MAX_HOLD_SECS: u64 = 604_800;
/// The longest reset reason, in characters.
pub const MAX_REASON_CHARS: usize = 500;

const DOMAIN: &[u8] = b"rampart recovery code v1\0";

/// `Recovery codes regenerated.`
pub const MSG_REGENERATED: &str = "Recovery codes regenerated.";

fn crockford() -> &'static data_encoding::Encoding {
    static ENCODING: OnceLock<data_encoding::Encoding> = OnceLock::new();
    ENCODING.get_or_init(|| {
        let mut spec = data_encoding::Specification::new();
        spec.symbols.push_str(ALPHABET);
        // The alphabet is 32 distinct ASCII symbols, which a specification always accepts.
        spec.encoding().unwrap_or_else(|_| data_encoding::BASE32_NOPAD.clone())
    })
}

/// A freshly issued set of recovery codes, to show once. Prints redacted; wiped when dropped.
#[derive(Clone)]
pub struct RecoveryCodes(Zeroizing<Vec<String>>);

impl RecoveryCodes {
    /// The codes, grouped (`7KQ2-M9XD-...`), in issue order.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The codes as one text: one per line, each line ending in `\n` (the widget's download).
    pub fn to_text(&self) -> Zeroizing<String> {
        let mut out = Zeroizing::new(String::with_capacity(self.0.len() * 30));
        for code in self.0.iter() {
            out.push_str(code);
            out.push('\n');
        }
        out
    }
}

impl fmt::Debug for RecoveryCodes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RecoveryCodes({} codes, <redacted>)", self.0.len())
    }
}

/// A recovery code as given, normalized (SPEC 8.1): trimmed, spaces and hyphens removed,
/// upper-cased, `O` read as `0` and `I`, `L` as `1`. Input that is not then exactly 24 symbols
/// of the alphabet (or is over 64 bytes) is kept as "does not verify". Prints redacted.
#[derive(Clone)]
pub struct RecoveryCode(Option<Zeroizing<[u8; CODE_SYMBOLS]>>);

impl RecoveryCode {
    /// Normalize `input`.
    pub fn parse(input: &str) -> Self {
        if input.len() > MAX_INPUT_BYTES {
            return Self(None);
        }
        let mut out = Zeroizing::new([0u8; CODE_SYMBOLS]);
        let mut n = 0;
        for b in input.trim_matches(|c: char| c.is_ascii_whitespace()).bytes() {
            let symbol = match b.to_ascii_uppercase() {
                b' ' | b'-' => continue,
                b'O' => b'0',
                b'I' | b'L' => b'1',
                s => s,
            };
            if n == CODE_SYMBOLS || !ALPHABET.as_bytes().contains(&symbol) {
                return Self(None);
            }
            out[n] = symbol;
            n += 1;
        }
        Self((n == CODE_SYMBOLS).then_some(out))
    }

    /// A code that does not verify (a JSON value that is not a string, for example).
    pub const fn malformed() -> Self {
        Self(None)
    }

    /// Whether the input has the form of a code (it may still be wrong).
    pub fn is_well_formed(&self) -> bool {
        self.0.is_some()
    }
}

impl fmt::Debug for RecoveryCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RecoveryCode(<redacted>)")
    }
}

/// What proves a contact's 2FA in disable and verify: an authenticator code or a recovery
/// code. `&str`, `String`, integers and [`Token`] convert to [`Factor::Token`].
#[derive(Clone, Debug)]
pub enum Factor {
    /// An authenticator code.
    Token(Token),
    /// A recovery code.
    RecoveryCode(RecoveryCode),
}

impl Factor {
    /// A recovery code, normalized. Only white space is no code at all: a missing token
    /// (SPEC 8.1: "given" means present and not only white space).
    pub fn recovery_code(input: &str) -> Self {
        if input.trim_matches(|c: char| c.is_ascii_whitespace()).is_empty() {
            return Self::Token(Token::Missing);
        }
        Self::RecoveryCode(RecoveryCode::parse(input))
    }

    /// The factor of a JSON body's `token` and `recoveryCode` (SPEC 8.1): "given" means present,
    /// not null and not only white space; both given is 400 "Give token or recoveryCode, not
    /// both"; neither is a missing token; a `recoveryCode` that is not a string does not verify.
    pub fn from_json(token: Option<&Value>, recovery_code: Option<&Value>) -> Result<Self> {
        match (given(token), recovery_code.filter(|v| given(Some(v)))) {
            (true, Some(_)) => Err(ErrorKind::FactorConflict.into()),
            (false, Some(Value::String(code))) => Ok(Self::recovery_code(code)),
            (false, Some(_)) => Ok(Self::RecoveryCode(RecoveryCode::malformed())),
            (_, None) => Ok(Self::Token(Token::from_json(token))),
        }
    }

    /// The factor of a library call's two optional arguments: both given is 400 "Give token or
    /// recoveryCode, not both" ([`ErrorKind::FactorConflict`]), as over HTTP.
    pub fn from_parts(token: Option<Token>, recovery_code: Option<&str>) -> Result<Self> {
        let recovery_code = recovery_code.filter(|c| !c.trim_matches(|c: char| c.is_ascii_whitespace()).is_empty());
        match (token.filter(|t| !matches!(t, Token::Missing)), recovery_code) {
            (Some(_), Some(_)) => Err(ErrorKind::FactorConflict.into()),
            (None, Some(code)) => Ok(Self::recovery_code(code)),
            (token, None) => Ok(Self::Token(token.unwrap_or(Token::Missing))),
        }
    }
}

/// Whether a JSON field is "given" (SPEC 8.1): present, not null and not only white space.
pub fn given(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.trim_matches(|c: char| c.is_ascii_whitespace()).is_empty(),
        Some(_) => true,
    }
}

impl<T: Into<Token>> From<T> for Factor {
    fn from(token: T) -> Self {
        Self::Token(token.into())
    }
}

/// How a verify passed, as answered in `method`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// An authenticator code.
    Token,
    /// A recovery code.
    RecoveryCode,
}

impl Method {
    /// `"token"` or `"recoveryCode"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Token => "token",
            Self::RecoveryCode => "recoveryCode",
        }
    }
}

/// A contact's 2FA state for support (SPEC 8.2), never a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactState {
    /// 2FA is enabled.
    pub enabled: bool,
    /// The failure count reached the lock (100).
    pub locked: bool,
    /// Consecutive wrong authenticator codes.
    pub failures: u32,
    /// Consecutive wrong recovery codes.
    pub recovery_failures: u32,
    /// Unused recovery codes (0 when disabled).
    pub recovery_codes_remaining: u32,
    /// The contact passed KYC.
    pub kyc_passed: bool,
    /// Until when purchases are on hold (Unix seconds); `None` when there is no hold or it
    /// has passed.
    pub purchase_hold_until: Option<u64>,
}

impl ContactState {
    fn of(rec: &ContactRecord, now: u64) -> Self {
        Self {
            enabled: rec.enabled,
            locked: rec.failures >= LOCK_AFTER,
            failures: rec.failures,
            recovery_failures: rec.recovery_failures,
            recovery_codes_remaining: remaining(rec),
            kyc_passed: rec.kyc_passed,
            purchase_hold_until: hold_of(rec, now),
        }
    }

    /// As JSON, the members `contact show` and `contact reset-2fa` print, times as RFC 3339 UTC.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "enabled": self.enabled,
            "locked": self.locked,
            "failures": self.failures,
            "recoveryFailures": self.recovery_failures,
            "recoveryCodesRemaining": self.recovery_codes_remaining,
            "kycPassed": self.kyc_passed,
            "purchaseHoldUntil": self.purchase_hold_until.map(rfc3339),
        })
    }
}

/// Whole seconds as RFC 3339 UTC (`2026-11-27T18:00:00Z`).
pub fn rfc3339(secs: u64) -> String {
    let t = i64::try_from(secs)
        .ok()
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let format = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    t.format(format).unwrap_or_default()
}

/// "May this contact purchase" (SPEC 2 and 8.2): yes, or no with the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PurchaseCheck {
    /// The contact may purchase.
    Allowed,
    /// 2FA is required (KYC passed, no waiver) and not enabled: set it up first.
    TwoFactorRequired,
    /// A purchase hold after a 2FA recovery or reset, until this time (Unix seconds).
    OnHold {
        /// When purchases resume.
        until: u64,
    },
}

impl PurchaseCheck {
    /// Whether the contact may purchase.
    pub const fn is_allowed(self) -> bool {
        matches!(self, Self::Allowed)
    }

    /// The refusal as an error (`Ok` when allowed): 403 "2FA is required before buying" or 403
    /// "Purchases are on hold until `<time>` after a 2FA reset".
    pub fn into_result(self) -> Result<()> {
        match self {
            Self::Allowed => Ok(()),
            Self::TwoFactorRequired => Err(ErrorKind::TwoFactorRequired.into()),
            Self::OnHold { until } => Err(Error::purchase_hold(&rfc3339(until))),
        }
    }
}

/// Until when a record's purchase hold lasts, if it has not passed.
pub(crate) fn hold_of(rec: &ContactRecord, now: u64) -> Option<u64> {
    rec.hold_until.filter(|&t| t > now)
}

/// Unused recovery codes of a record (0 when 2FA is off).
pub(crate) fn remaining(rec: &ContactRecord) -> u32 {
    if rec.enabled { rec.recovery.as_ref().map_or(0, RecoveryCodeSet::remaining) } else { 0 }
}

fn code_hash(partner: &PartnerId, contact: &ContactId, set: &[u8; 16], code: &[u8; CODE_SYMBOLS]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(DOMAIN);
    h.update(partner.as_bytes());
    h.update(contact.as_bytes());
    h.update(set);
    h.update(code);
    h.finalize().into()
}

/// A new set for a contact: the codes to show and what to store.
pub(crate) fn issue(partner: &PartnerId, contact: &ContactId) -> Result<(RecoveryCodes, RecoveryCodeSet)> {
    // One read of the OS CSPRNG for the set id and every code.
    let mut raw = Zeroizing::new([0u8; 16 + RECOVERY_CODES * CODE_BYTES]);
    fill_random(&mut raw[..])?;
    let (id_bytes, code_bytes) = raw.split_at(16);
    let id: [u8; 16] = id_bytes.try_into().map_err(|_| Error::new(ErrorKind::Internal))?;
    let mut shown = Zeroizing::new(Vec::with_capacity(RECOVERY_CODES));
    let mut codes = Vec::with_capacity(RECOVERY_CODES);
    let mut symbols = Zeroizing::new([0u8; CODE_SYMBOLS]);
    for random in code_bytes.chunks_exact(CODE_BYTES) {
        crockford().encode_mut(random, &mut symbols[..]);
        codes.push(RecoveryCodeSlot { hash: code_hash(partner, contact, &id, &symbols), used: false });
        let mut grouped = String::with_capacity(CODE_SYMBOLS + 5);
        for (i, group) in symbols.chunks(4).enumerate() {
            if i > 0 {
                grouped.push('-');
            }
            // Alphabet symbols are ASCII.
            grouped.extend(group.iter().map(|&b| char::from(b)));
        }
        shown.push(grouped);
    }
    Ok((RecoveryCodes(shown), RecoveryCodeSet { id, codes }))
}

/// Where a given code stands in a set.
pub(crate) enum Lookup {
    /// An unused code, at this index.
    Unused(usize),
    /// A code of this set already used.
    Used,
    /// Not a code of this set (or no set, or malformed).
    Unknown,
}

/// Look `code` up in the contact's set, comparing every slot in constant time.
pub(crate) fn lookup(partner: &PartnerId, contact: &ContactId, rec: &ContactRecord, code: &RecoveryCode) -> Lookup {
    let (Some(set), Some(symbols)) = (rec.recovery.as_ref(), code.0.as_ref()) else { return Lookup::Unknown };
    let given = code_hash(partner, contact, &set.id, symbols);
    let mut found = None;
    for (i, slot) in set.codes.iter().enumerate() {
        if bool::from(slot.hash.ct_eq(&given)) {
            found = Some((i, slot.used));
        }
    }
    match found {
        Some((_, true)) => Lookup::Used,
        Some((i, false)) => Lookup::Unused(i),
        None => Lookup::Unknown,
    }
}

/// Erase every 2FA secret of a record and clear both counters and the lock; the last accepted
/// step stays (a code from before never works again).
pub(crate) fn erase(rec: &mut ContactRecord) {
    rec.enabled = false;
    rec.secret = None;
    rec.pending = None;
    rec.pending_created_at = None;
    rec.recovery = None;
    rec.failures = 0;
    rec.last_failure_at = None;
    rec.recovery_failures = 0;
    rec.recovery_last_failure_at = None;
}

fn check_reason(reason: &str) -> Result<()> {
    let n = reason.chars().count();
    if n == 0 || n > MAX_REASON_CHARS || reason.chars().any(char::is_control) {
        return Err(Error::invalid_input("reason", "must be 1 to 500 characters without control characters"));
    }
    Ok(())
}

impl Service {
    /// The contact's 2FA state for support: read-only, never a secret. A contact the store has
    /// never seen is a contact without 2FA; an unknown partner is 404 "Partner not found".
    pub fn contact_state(&self, partner: &PartnerId, contact: &ContactId) -> Result<ContactState> {
        self.partner_record(partner)?;
        let rec = self.store().contact(partner, contact).map_err(Self::internal)?.unwrap_or_default();
        Ok(ContactState::of(&rec, self.now()))
    }

    /// Whether 2FA is enabled and how many unused recovery codes the contact has (0 when 2FA
    /// is off), from one read: the status answer of SPEC 8.1. The errors of
    /// [`Service::status_2fa`].
    pub fn status_with_recovery_codes(&self, partner: &PartnerId, contact: &ContactId) -> Result<(bool, u32)> {
        let fail = |e| Error::new(ErrorKind::StatusFailed).with_cause(e);
        match self.store().contact(partner, contact).map_err(fail)? {
            Some(rec) => Ok((rec.enabled, remaining(&rec))),
            None => self.status_2fa(partner, contact).map(|enabled| (enabled, 0)),
        }
    }

    /// Reset a contact's 2FA (SPEC 8.2), an operator's action: in one transaction erase the
    /// secret, pending secret and recovery codes, clear both counters and the lock, keep the
    /// last accepted step, start the purchase hold and write `2fa.reset` (`reason`,
    /// `approvedBy`). `reason` is 1 to 500 characters without control characters. For a
    /// production partner `approved_by` must name another operator (four eyes). Returns the
    /// state before the reset. A contact without 2FA is reset all the same (audited, held).
    pub fn reset_2fa(
        &self,
        operator: &str,
        partner: &PartnerId,
        contact: &ContactId,
        reason: &str,
        approved_by: Option<&str>,
    ) -> Result<ContactState> {
        let actor = Self::operator(operator)?;
        check_reason(reason)?;
        let approved_by = approved_by.map(str::trim).filter(|a| !a.is_empty());
        if let Some(a) = approved_by
            && a.chars().any(char::is_control)
        {
            return Err(Error::invalid_input("approvedBy", "must name an operator, without control characters"));
        }
        let record = self.partner_record(partner)?;
        if record.environment == Environment::Production {
            match approved_by {
                None => {
                    return Err(Error::invalid_input(
                        "approvedBy",
                        "is required in production: a second operator must approve the reset",
                    ));
                }
                Some(a) if a == operator.trim() => {
                    return Err(Error::invalid_input(
                        "approvedBy",
                        "must name another operator than the one resetting",
                    ));
                }
                Some(_) => {}
            }
        }
        let now = self.now();
        let hold = self.config().purchase_hold_secs;
        let mut before = None;
        self.store()
            .update_contact(partner, contact, &mut |rec, effects| {
                before = Some(ContactState::of(rec, now));
                erase(rec);
                rec.hold_until = Some(now.saturating_add(hold));
                let mut d = Map::new();
                d.insert("reason".into(), Value::from(reason));
                d.insert("approvedBy".into(), approved_by.map_or(Value::Null, Value::from));
                effects.audit(self.draft_about(&actor, event::RESET, contact, rec, d));
                true
            })
            .map_err(Self::internal)?;
        Ok(before.unwrap_or_else(|| ContactState::of(&ContactRecord::default(), now)))
    }

    /// "May this contact purchase": the KYC rule first (set up 2FA), then the purchase hold.
    pub fn purchase_check(&self, partner: &PartnerId, contact: &ContactId) -> Result<PurchaseCheck> {
        let waived = self.partner_record(partner)?.two_factor_waived;
        let rec = self.store().contact(partner, contact).map_err(Self::internal)?.unwrap_or_default();
        Ok(self.purchase_check_of(&rec, waived))
    }

    pub(crate) fn purchase_check_of(&self, rec: &ContactRecord, waived: bool) -> PurchaseCheck {
        if rec.kyc_passed && !waived && !rec.enabled {
            return PurchaseCheck::TwoFactorRequired;
        }
        match hold_of(rec, self.now()) {
            Some(until) => PurchaseCheck::OnHold { until },
            None => PurchaseCheck::Allowed,
        }
    }
}

/// The audit details of `recovery_codes.issued`.
pub(crate) fn issued(reason: &'static str) -> Map<String, Value> {
    details([("reason", Value::from(reason))])
}

/// The audit details of `recovery_code.used`.
pub(crate) fn used(remaining: u32) -> Map<String, Value> {
    details([("remaining", Value::from(remaining))])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> Option<String> {
        RecoveryCode::parse(s).0.map(|b| String::from_utf8(b.to_vec()).unwrap())
    }

    #[test]
    fn normalization_follows_the_spec() {
        let canonical = "7KQ2M9XDA1B2C3D4E5F6G7H8";
        assert_eq!(norm("7KQ2-M9XD-A1B2-C3D4-E5F6-G7H8").as_deref(), Some(canonical));
        assert_eq!(norm("  7kq2-m9xd-a1b2-c3d4-e5f6-g7h8\n").as_deref(), Some(canonical));
        assert_eq!(norm("7KQ2 M9XD A1B2 C3D4 E5F6 G7H8").as_deref(), Some(canonical));
        assert_eq!(norm("7KQ2--M9XD A1B2-C3D4E5F6G7H8").as_deref(), Some(canonical));
        // O reads as 0, I and L as 1.
        assert_eq!(norm("OOOO-IIII-LLLL-oooo-iiii-llll").as_deref(), Some("000011111111000011111111"));
        // 23 and 25 symbols, symbols outside the alphabet (U), other alphabets, over 64 bytes.
        assert_eq!(norm("7KQ2-M9XD-A1B2-C3D4-E5F6-G7H"), None);
        assert_eq!(norm("7KQ2-M9XD-A1B2-C3D4-E5F6-G7H8X"), None);
        assert_eq!(norm("7KQ2-M9XD-A1B2-C3D4-E5F6-G7HU"), None);
        assert_eq!(norm("7KQ2-M9XD-A1B2-C3D4-E5F6-G7Hß"), None);
        assert_eq!(norm("７KQ2-M9XD-A1B2-C3D4-E5F6-G7H8"), None);
        assert_eq!(norm("7KQ2_M9XD_A1B2_C3D4_E5F6_G7H8"), None);
        assert_eq!(norm(&format!("{}{canonical}", " ".repeat(41))), None);
        assert_eq!(norm(&format!("{}{canonical}", " ".repeat(40))).as_deref(), Some(canonical));
        assert_eq!(norm(""), None);
    }

    #[test]
    fn issued_codes_have_the_format_and_match_their_hashes() {
        let (p, c) = (PartnerId::random(), ContactId::random());
        let (codes, set) = issue(&p, &c).unwrap();
        assert_eq!(codes.len(), RECOVERY_CODES);
        assert_eq!(set.codes.len(), RECOVERY_CODES);
        let mut rec = ContactRecord { enabled: true, recovery: Some(set.clone()), ..ContactRecord::default() };
        for (i, code) in codes.as_slice().iter().enumerate() {
            assert_eq!(code.len(), 29);
            let groups: Vec<&str> = code.split('-').collect();
            assert_eq!(groups.len(), 6);
            assert!(groups.iter().all(|g| g.len() == 4 && g.chars().all(|ch| ALPHABET.contains(ch))), "{code}");
            assert!(matches!(lookup(&p, &c, &rec, &RecoveryCode::parse(code)), Lookup::Unused(j) if j == i));
            // Bound to the partner, the contact and the set.
            assert!(matches!(lookup(&PartnerId::random(), &c, &rec, &RecoveryCode::parse(code)), Lookup::Unknown));
            assert!(matches!(lookup(&p, &ContactId::random(), &rec, &RecoveryCode::parse(code)), Lookup::Unknown));
        }
        rec.recovery.as_mut().unwrap().codes[0].used = true;
        assert!(matches!(lookup(&p, &c, &rec, &RecoveryCode::parse(&codes.as_slice()[0])), Lookup::Used));
        let (_, other) = issue(&p, &c).unwrap();
        rec.recovery = Some(other);
        assert!(matches!(lookup(&p, &c, &rec, &RecoveryCode::parse(&codes.as_slice()[1])), Lookup::Unknown));
        assert_eq!(format!("{codes:?}"), "RecoveryCodes(10 codes, <redacted>)");
        assert_eq!(codes.to_text().lines().count(), 10);
    }

    #[test]
    fn the_set_encoding_round_trips_and_rejects_garbage() {
        let (_, set) = issue(&PartnerId::random(), &ContactId::random()).unwrap();
        let mut set = set;
        set.codes[3].used = true;
        assert_eq!(RecoveryCodeSet::from_bytes(&set.to_bytes()).unwrap(), set);
        assert_eq!(set.remaining(), 9);
        let bytes = set.to_bytes();
        assert!(RecoveryCodeSet::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        assert!(RecoveryCodeSet::from_bytes(&[2]).is_err());
        assert!(RecoveryCodeSet::from_bytes(&[]).is_err());
    }

    #[test]
    fn factors_from_json() {
        use serde_json::json;
        let f = |t: Value, r: Value| Factor::from_json(Some(&t), Some(&r));
        assert_eq!(f(json!("123456"), json!("7KQ2")).unwrap_err().kind(), ErrorKind::FactorConflict);
        assert!(matches!(f(json!(" "), json!("7KQ2")).unwrap(), Factor::RecoveryCode(_)));
        assert!(matches!(f(Value::Null, json!(5)).unwrap(), Factor::RecoveryCode(c) if !c.is_well_formed()));
        assert!(matches!(f(json!("123456"), json!("  ")).unwrap(), Factor::Token(Token::Code(_))));
        assert!(matches!(f(Value::Null, Value::Null).unwrap(), Factor::Token(Token::Missing)));
        assert!(matches!(Factor::from_json(None, None).unwrap(), Factor::Token(Token::Missing)));
        assert_eq!(
            Factor::from_parts(Some(Token::parse("123456")), Some("x")).unwrap_err().kind(),
            ErrorKind::FactorConflict
        );
    }

    #[test]
    fn reset_times_print_as_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_795_000_000), "2026-11-18T11:06:40Z");
    }
}
