//! The 2FA lifecycle of a contact: create, enable, disable, status, verify; throttling and the
//! lock; the KYC rule. Every rule of `SPEC.md` section 2 lives here, inside one atomic
//! [`Store::update_contact`](crate::store::Store::update_contact) per attempt.
//!
//! Order of answers when several apply: the state answers (403, 409), then 423, then 429,
//! then 401 for a missing token, then the evaluation.

use std::fmt;
use std::time::Instant;

use serde_json::{Map, Value};

use crate::audit::{Actor, details, event};
use crate::error::{Error, ErrorKind, Result};
use crate::ids::{ContactId, PartnerId};
use crate::metrics::{AttemptOperation, AttemptResult, Factor as FactorLabel, Transition};
use crate::recovery::{self, Factor, Lookup, Method, RecoveryCode, RecoveryCodes};
use crate::service::Service;
use crate::store::{ContactRecord, Effects, RecoveryCodeSet};
use crate::token::Token;
use crate::totp::{self, Secret};
use crate::vocab::Field;

/// `Successfully created 2fa!`
pub const MSG_CREATED: &str = "Successfully created 2fa!";
/// `Successfully enabled 2fa!`
pub const MSG_ENABLED: &str = "Successfully enabled 2fa!";
/// `Successfully disbaled 2fa!` (sic: wire-compatible with the original service).
pub const MSG_DISABLED: &str = "Successfully disbaled 2fa!";
/// `2FA token is valid.`
pub const MSG_VALID: &str = "2FA token is valid.";

/// The status message: `2FA is true.` or `2FA is false.`
pub const fn status_message(enabled: bool) -> &'static str {
    if enabled { "2FA is true." } else { "2FA is false." }
}

/// Consecutive failures from which attempts are throttled.
pub const THROTTLE_AFTER: u32 = 5;
pub use crate::vocab::LOCK_AFTER;
/// The longest throttle delay.
pub const MAX_DELAY_SECS: u64 = 3600;

/// Seconds attempts are refused after the `failures`-th consecutive failure:
/// `min(30 * 2^(k-5), 3600)` for k >= 5, else none.
pub fn throttle_delay(failures: u32) -> Option<u64> {
    let over = failures.checked_sub(THROTTLE_AFTER)?;
    let delay = 1u64.checked_shl(over).and_then(|p| p.checked_mul(30)).unwrap_or(u64::MAX);
    Some(delay.min(MAX_DELAY_SECS))
}

/// What create hands to the user. Prints redacted.
#[derive(Clone)]
pub struct TwoFactorSetup {
    /// The Key URI as a QR code, `data:image/png;base64,...`.
    pub qr_code: String,
    /// The secret in unpadded base32, for manual entry.
    pub manual: String,
    /// The otpauth Key URI.
    pub uri: String,
}

impl fmt::Debug for TwoFactorSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TwoFactorSetup { <redacted> }")
    }
}

/// The outcome of [`Service::verify_2fa`]: a wrong code is an outcome, not an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    /// The code is valid and now used up (its time step, or the recovery code).
    Accepted {
        /// Which factor it was.
        method: Method,
        /// Unused recovery codes after it (0 once 2FA is off).
        recovery_codes_remaining: u32,
    },
    /// The code is wrong, malformed or already used (the three are not told apart).
    Rejected,
}

impl Verification {
    /// `true` for [`Verification::Accepted`].
    pub const fn is_accepted(self) -> bool {
        matches!(self, Self::Accepted { .. })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Operation {
    Enable,
    Disable,
    Verify,
    Regenerate,
}

impl Operation {
    const fn metric(self) -> AttemptOperation {
        match self {
            Self::Enable => AttemptOperation::Enable,
            Self::Disable => AttemptOperation::Disable,
            Self::Verify => AttemptOperation::Verify,
            Self::Regenerate => AttemptOperation::Regenerate,
        }
    }

    fn failure(self) -> ErrorKind {
        match self {
            Self::Enable | Self::Regenerate => ErrorKind::EnableFailed,
            Self::Disable => ErrorKind::DisableFailed,
            Self::Verify => ErrorKind::VerifyFailed,
        }
    }
}

/// Who attempts what, when: the fixed part of one evaluation.
#[derive(Clone, Copy)]
struct Attempt<'a> {
    actor: &'a Actor,
    partner: &'a PartnerId,
    contact: &'a ContactId,
    op: Operation,
    now: u64,
}

fn record_failure(rec: &mut ContactRecord, now: u64) {
    rec.failures = rec.failures.saturating_add(1);
    rec.last_failure_at = Some(now);
}

/// The back-off of a failure counter at `now`: the seconds still to wait until `last +
/// delay(failures)`, or `None` when attempts are allowed. Never more than the delay itself: a
/// server whose `now` was read just before another server stored the failure (a second later
/// by its clock) still answers at most the SPEC's delay.
pub(crate) fn throttle_wait(failures: u32, last: Option<u64>, now: u64) -> Option<u64> {
    let delay = throttle_delay(failures)?;
    let until = last?.checked_add(delay)?;
    (now < until).then(|| (until - now).min(delay))
}

/// Whether `actor` may touch `rec` (SPEC 11): a team member's own 2FA record only through the
/// dashboard (actor `member`), a contact's never through it; operators and Rampart itself may
/// touch either (an operator unlocks or resets a member as a contact). A record never written
/// belongs to whoever writes it first.
fn subject_matches(actor: &Actor, rec: &ContactRecord) -> bool {
    let member = matches!(actor, Actor::Member(_));
    let either = matches!(actor, Actor::Operator(_) | Actor::System);
    either || *rec == ContactRecord::default() || rec.member == member
}

/// The refusal when a contact call names a team member's 2FA record, or the dashboard a
/// contact's.
fn wrong_subject() -> Error {
    Error::invalid_input("contactId", "is a dashboard team member's id, not a contact's")
}

impl Service {
    fn issuer(&self, given: Option<&str>) -> Result<String> {
        match given {
            None | Some("") => Ok(format!("{}2FA", self.config().service_name)),
            Some(s) => {
                let n = s.chars().count();
                if n > 64 || s.contains(':') || s.chars().any(char::is_control) {
                    Err(ErrorKind::IssuerInvalid.into())
                } else {
                    Ok(s.to_owned())
                }
            }
        }
    }

    /// Create a new pending secret for a contact, labelled with the contact id.
    /// See [`Service::create_2fa_with_label`].
    pub fn create_2fa(&self, partner: &PartnerId, contact: &ContactId, issuer: Option<&str>) -> Result<TwoFactorSetup> {
        self.create_2fa_with_label(partner, contact, issuer, &contact.to_string())
    }

    /// Create a new pending secret for a contact (replacing an earlier pending one) with the
    /// account `label` shown in the authenticator app. `issuer` empty or `None` means the
    /// default, the service name followed by `2FA`. Fails with 403 while 2FA is enabled.
    pub fn create_2fa_with_label(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        issuer: Option<&str>,
        label: &str,
    ) -> Result<TwoFactorSetup> {
        self.create_2fa_as(&Actor::Partner, partner, contact, issuer, label)
    }

    pub(crate) fn create_2fa_as(
        &self,
        actor: &Actor,
        partner: &PartnerId,
        contact: &ContactId,
        issuer: Option<&str>,
        label: &str,
    ) -> Result<TwoFactorSetup> {
        let issuer = self.issuer(issuer)?;
        let fail = |e: Error| e.relabel(ErrorKind::CreateFailed);
        // Never an orphan contact: the partner must exist (404 otherwise).
        self.store()
            .partner(partner)
            .map_err(|e| Error::new(ErrorKind::CreateFailed).with_cause(e))?
            .ok_or(ErrorKind::PartnerNotFound)?;
        let secret = Secret::generate(self.config().secret_bytes).map_err(fail)?;
        let mut sealed = Some(self.keys().seal(partner, contact, Field::Pending, secret.as_bytes()).map_err(fail)?);
        let enrolment = totp::enrol(secret, &issuer, label).map_err(|e| {
            if e.kind() == ErrorKind::InvalidInput {
                Error::invalid_input("label", "is too long for a QR code")
            } else {
                fail(e)
            }
        })?;
        let now = self.now();
        let (mut enabled, mut wrong) = (false, false);
        self.store()
            .update_contact(partner, contact, &mut |rec, effects| {
                wrong = !subject_matches(actor, rec);
                enabled = rec.enabled;
                if enabled || wrong {
                    return false;
                }
                rec.member = matches!(actor, Actor::Member(_));
                rec.pending = sealed.take();
                rec.pending_created_at = Some(now);
                effects.audit(self.draft(actor, event::CREATED, Some(contact), Map::new()));
                true
            })
            .map_err(|e| Error::new(ErrorKind::CreateFailed).with_cause(e))?;
        if wrong {
            return Err(wrong_subject());
        }
        if enabled {
            return Err(ErrorKind::MustDisableFirst.into());
        }
        self.metrics().transition(Transition::Created);
        Ok(TwoFactorSetup { qr_code: enrolment.qr_code, manual: enrolment.manual, uri: enrolment.uri })
    }

    /// Confirm the pending secret with a code from it: 2FA becomes enabled, the code's time
    /// step is used up (so it cannot then disable), and a set of 10 recovery codes is issued in
    /// the same transaction. Returns the codes, to show once: they are never shown again.
    pub fn enable_2fa(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        token: impl Into<Token>,
    ) -> Result<RecoveryCodes> {
        self.enable_2fa_as(&Actor::Partner, partner, contact, token.into())
    }

    pub(crate) fn enable_2fa_as(
        &self,
        actor: &Actor,
        partner: &PartnerId,
        contact: &ContactId,
        token: Token,
    ) -> Result<RecoveryCodes> {
        self.issuing_attempt(actor, partner, contact, Operation::Enable, token)
    }

    /// Replace the contact's recovery codes with a new set, proven by an authenticator code
    /// (the section 2 rules: window, replay, throttle, lock). Returns the new codes, to show
    /// once. 409 "2FA is not enabled" when it is off.
    pub fn regenerate_recovery_codes(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        token: impl Into<Token>,
    ) -> Result<RecoveryCodes> {
        self.regenerate_recovery_codes_as(&Actor::Partner, partner, contact, token.into())
    }

    pub(crate) fn regenerate_recovery_codes_as(
        &self,
        actor: &Actor,
        partner: &PartnerId,
        contact: &ContactId,
        token: Token,
    ) -> Result<RecoveryCodes> {
        self.issuing_attempt(actor, partner, contact, Operation::Regenerate, token)
    }

    /// Turn 2FA off with an authenticator code or a recovery code ([`Factor`]; `&str` is an
    /// authenticator code); the secret and the recovery codes are erased. A recovery code works
    /// while the contact is locked, clears the lock, and starts the purchase hold.
    pub fn disable_2fa(&self, partner: &PartnerId, contact: &ContactId, factor: impl Into<Factor>) -> Result<()> {
        self.disable_2fa_as(&Actor::Partner, partner, contact, factor.into())
    }

    pub(crate) fn disable_2fa_as(
        &self,
        actor: &Actor,
        partner: &PartnerId,
        contact: &ContactId,
        factor: Factor,
    ) -> Result<()> {
        match self.attempt(actor, partner, contact, Operation::Disable, factor, None)? {
            Verification::Accepted { .. } => Ok(()),
            Verification::Rejected => Err(ErrorKind::TokenFailed.into()),
        }
    }

    /// Check a code for a login or purchase, under the same replay and throttle rules: an
    /// authenticator code or a recovery code ([`Factor`]; a recovery code is used up). A wrong
    /// code is [`Verification::Rejected`]; errors are the state, lock, throttle, missing-token
    /// and storage answers.
    pub fn verify_2fa(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        factor: impl Into<Factor>,
    ) -> Result<Verification> {
        self.attempt(&Actor::Partner, partner, contact, Operation::Verify, factor.into(), None)
    }

    pub(crate) fn verify_2fa_as(
        &self,
        actor: &Actor,
        partner: &PartnerId,
        contact: &ContactId,
        factor: Factor,
    ) -> Result<Verification> {
        self.attempt(actor, partner, contact, Operation::Verify, factor, None)
    }

    /// Whether 2FA is enabled for the contact (unknown contacts: false; an unknown partner:
    /// 404 "Partner not found").
    pub fn status_2fa(&self, partner: &PartnerId, contact: &ContactId) -> Result<bool> {
        let fail = |e| Error::new(ErrorKind::StatusFailed).with_cause(e);
        match self.store().contact_enabled(partner, contact).map_err(fail)? {
            Some(enabled) => Ok(enabled),
            None => self.partner_exists(partner, ErrorKind::StatusFailed).map(|()| false),
        }
    }

    /// `Ok` when the partner exists, else 404 "Partner not found"; a store failure is
    /// `failure`. Asked only where a contact has no record, so a known contact costs nothing.
    fn partner_exists(&self, partner: &PartnerId, failure: ErrorKind) -> Result<()> {
        match self.store().partner(partner) {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(ErrorKind::PartnerNotFound.into()),
            Err(e) => Err(Error::new(failure).with_cause(e)),
        }
    }

    /// Enable or regenerate: an authenticator-code attempt that issues a new set of recovery
    /// codes (made before the transaction, so it holds the record no longer than any attempt).
    fn issuing_attempt(
        &self,
        actor: &Actor,
        partner: &PartnerId,
        contact: &ContactId,
        op: Operation,
        token: Token,
    ) -> Result<RecoveryCodes> {
        let (codes, set) = recovery::issue(partner, contact).map_err(|e| e.relabel(op.failure()))?;
        match self.attempt(actor, partner, contact, op, Factor::Token(token), Some(&set))? {
            Verification::Accepted { .. } => Ok(codes),
            Verification::Rejected => Err(ErrorKind::TokenFailed.into()),
        }
    }

    fn attempt(
        &self,
        actor: &Actor,
        partner: &PartnerId,
        contact: &ContactId,
        op: Operation,
        factor: Factor,
        issued: Option<&RecoveryCodeSet>,
    ) -> Result<Verification> {
        let started = Instant::now();
        let now = self.now();
        let mut outcome = Err(Error::new(op.failure()));
        let (mut never_written, mut replayed, mut locked) = (false, false, false);
        let stored = self.store().update_contact(partner, contact, &mut |rec, effects| {
            never_written = *rec == ContactRecord::default();
            if !subject_matches(actor, rec) {
                outcome = Err(wrong_subject());
                return false;
            }
            let attempt = Attempt { actor, partner, contact, op, now };
            let (result, write) = match &factor {
                Factor::Token(token) => self.evaluate(&attempt, token, issued, rec, effects),
                Factor::RecoveryCode(code) => self.evaluate_recovery(&attempt, code, rec, effects),
            };
            // A rejection that writes nothing is a replay (a failure is always counted).
            replayed = matches!(result, Ok(Verification::Rejected)) && !write;
            locked = effects.audit.iter().any(|d| d.event == event::LOCKED);
            outcome = result;
            write
        });
        let committed = stored.is_ok();
        let outcome = match stored {
            Err(e) => Err(Error::new(op.failure()).with_cause(e)),
            // A contact with no record is refused on its state (nothing is written); an unknown
            // partner is the truer answer then.
            Ok(()) if never_written && outcome.is_err() => self.partner_exists(partner, op.failure()).and(outcome),
            Ok(()) => outcome,
        };
        let label = match factor {
            Factor::Token(_) => FactorLabel::Token,
            Factor::RecoveryCode(_) => FactorLabel::RecoveryCode,
        };
        self.count_attempt(op, label, &outcome, replayed, locked && committed, started);
        outcome
    }

    /// The attempt's metrics: its result and time, and the state changes it made.
    fn count_attempt(
        &self,
        op: Operation,
        factor: FactorLabel,
        outcome: &Result<Verification>,
        replayed: bool,
        locked: bool,
        started: Instant,
    ) {
        let result = match outcome {
            Ok(Verification::Accepted { .. }) => AttemptResult::Accepted,
            Ok(Verification::Rejected) if replayed => AttemptResult::Replayed,
            Ok(Verification::Rejected) => AttemptResult::Rejected,
            Err(e) => match e.kind() {
                ErrorKind::Locked => AttemptResult::Locked,
                ErrorKind::Throttled => AttemptResult::Throttled,
                ErrorKind::TokenMissing => AttemptResult::Missing,
                _ => AttemptResult::Error,
            },
        };
        let metrics = self.metrics();
        metrics.attempt(op.metric(), factor, result, started.elapsed());
        if factor == FactorLabel::RecoveryCode && result == AttemptResult::Replayed {
            metrics.recovery_code_reused();
        }
        match (op, result) {
            (Operation::Enable, AttemptResult::Accepted) => metrics.transition(Transition::Enabled),
            (Operation::Disable, AttemptResult::Accepted) => metrics.transition(Transition::Disabled),
            _ => {}
        }
        if locked {
            metrics.transition(Transition::Locked);
        }
    }

    fn pending_is_live(&self, rec: &ContactRecord, now: u64) -> bool {
        rec.pending.is_some()
            && rec.pending_created_at.is_some_and(|t| now < t.saturating_add(self.config().pending_ttl_secs))
    }

    /// The lock and the back-off of authenticator codes.
    fn refusal(&self, rec: &ContactRecord, now: u64) -> Option<Error> {
        if !self.config().throttling {
            return None;
        }
        if rec.failures >= LOCK_AFTER {
            return Some(ErrorKind::Locked.into());
        }
        throttle_wait(rec.failures, rec.last_failure_at, now).map(Error::throttled)
    }

    /// The back-off of recovery codes: their own counter, and no lock (SPEC 8.1).
    fn recovery_refusal(&self, rec: &ContactRecord, now: u64) -> Option<Error> {
        if !self.config().throttling {
            return None;
        }
        throttle_wait(rec.recovery_failures, rec.recovery_last_failure_at, now).map(Error::throttled)
    }

    /// The answer to a state a factor cannot be used in, or `None`.
    fn state_answer(&self, op: Operation, rec: &ContactRecord, now: u64) -> Option<ErrorKind> {
        match op {
            Operation::Enable if rec.enabled => Some(ErrorKind::AlreadyEnabled),
            Operation::Enable if !self.pending_is_live(rec, now) => Some(ErrorKind::NotCreated),
            Operation::Disable | Operation::Verify | Operation::Regenerate if !rec.enabled => {
                Some(ErrorKind::NotEnabled)
            }
            _ => None,
        }
    }

    /// One recovery-code attempt (disable or verify) against a locked record. Returns the
    /// answer and whether to write `rec`. A used code presented again is refused and audited as
    /// `recovery_code.reused`, not counted; a wrong one counts in the recovery counter.
    fn evaluate_recovery(
        &self,
        a: &Attempt<'_>,
        code: &RecoveryCode,
        rec: &mut ContactRecord,
        effects: &mut Effects,
    ) -> (Result<Verification>, bool) {
        let Attempt { actor, partner, contact, op, now } = *a;
        if matches!(op, Operation::Enable | Operation::Regenerate) {
            return (Err(Error::invalid_input("recoveryCode", "is not accepted here")), false);
        }
        if let Some(kind) = self.state_answer(op, rec, now) {
            return (Err(kind.into()), false);
        }
        if let Some(refused) = self.recovery_refusal(rec, now) {
            return (Err(refused), false);
        }
        let index = match recovery::lookup(partner, contact, rec, code) {
            Lookup::Unused(i) => i,
            Lookup::Used => {
                effects.audit(self.draft(actor, event::RECOVERY_CODE_REUSED, Some(contact), Map::new()));
                return (Ok(Verification::Rejected), false);
            }
            Lookup::Unknown => {
                rec.recovery_failures = rec.recovery_failures.saturating_add(1);
                rec.recovery_last_failure_at = Some(now);
                return (Ok(Verification::Rejected), true);
            }
        };
        if let Some(set) = rec.recovery.as_mut() {
            set.codes[index].used = true;
        }
        rec.recovery_failures = 0;
        rec.recovery_last_failure_at = None;
        if op == Operation::Disable {
            recovery::erase(rec);
            rec.hold_until = Some(now.saturating_add(self.config().purchase_hold_secs));
            effects.audit(self.draft(actor, event::RECOVERY_CODE_USED, Some(contact), recovery::used(0)));
            let method = details([("method", Value::from(Method::RecoveryCode.as_str()))]);
            effects.audit(self.draft(actor, event::DISABLED, Some(contact), method));
        } else {
            let left = recovery::remaining(rec);
            effects.audit(self.draft(actor, event::RECOVERY_CODE_USED, Some(contact), recovery::used(left)));
        }
        let remaining = recovery::remaining(rec);
        (Ok(Verification::Accepted { method: Method::RecoveryCode, recovery_codes_remaining: remaining }), true)
    }

    /// A failed evaluation: counted, and the 100th in a row locks 2FA (audited).
    fn record_failure(&self, a: &Attempt<'_>, rec: &mut ContactRecord, effects: &mut Effects) {
        record_failure(rec, a.now);
        if self.config().throttling && rec.failures == LOCK_AFTER {
            let locked = details([("failures", Value::from(LOCK_AFTER))]);
            effects.audit(self.draft(a.actor, event::LOCKED, Some(a.contact), locked));
        }
    }

    /// One authenticator-code attempt against a locked record; `issued` is the new set of
    /// recovery codes of an enable or regenerate. Returns the answer and whether to write `rec`.
    fn evaluate(
        &self,
        a: &Attempt<'_>,
        token: &Token,
        issued: Option<&RecoveryCodeSet>,
        rec: &mut ContactRecord,
        effects: &mut Effects,
    ) -> (Result<Verification>, bool) {
        let Attempt { actor, partner, contact, op, now } = *a;
        if let Some(kind) = self.state_answer(op, rec, now) {
            return (Err(kind.into()), false);
        }
        if let Some(refused) = self.refusal(rec, now) {
            return (Err(refused), false);
        }
        let code = match token {
            Token::Missing => return (Err(ErrorKind::TokenMissing.into()), false),
            Token::Malformed => {
                self.record_failure(a, rec, effects);
                return (Ok(Verification::Rejected), true);
            }
            Token::Code(code) => code,
        };
        let (field, sealed) = match op {
            Operation::Enable => (Field::Pending, rec.pending.as_deref()),
            Operation::Disable | Operation::Verify | Operation::Regenerate => (Field::Secret, rec.secret.as_deref()),
        };
        let opened = sealed.ok_or_else(|| Error::new(op.failure()).with_cause("secret is missing")).and_then(|s| {
            self.keys().open(partner, contact, field, s).map_err(|e| Error::new(op.failure()).with_cause(e))
        });
        let secret = match opened {
            Ok(s) => s,
            Err(e) => return (Err(e), false),
        };
        match totp::verify_code(&secret, *code, now, self.config().window) {
            None => {
                self.record_failure(a, rec, effects);
                (Ok(Verification::Rejected), true)
            }
            // A replay: refused, but not counted, so a double submit cannot throttle its user.
            Some(step) if rec.last_step.is_some_and(|last| step <= last) => (Ok(Verification::Rejected), false),
            Some(step) => {
                match op {
                    Operation::Enable => match self.keys().seal(partner, contact, Field::Secret, &secret) {
                        Ok(sealed) => {
                            rec.enabled = true;
                            rec.secret = Some(sealed);
                            rec.pending = None;
                            rec.pending_created_at = None;
                            rec.recovery = issued.cloned();
                            rec.recovery_failures = 0;
                            rec.recovery_last_failure_at = None;
                            effects.audit(self.draft(actor, event::ENABLED, Some(contact), Map::new()));
                            let why = recovery::issued("enable");
                            effects.audit(self.draft(actor, event::RECOVERY_CODES_ISSUED, Some(contact), why));
                        }
                        Err(e) => return (Err(e.relabel(op.failure())), false),
                    },
                    Operation::Disable => {
                        recovery::erase(rec);
                        let method = details([("method", Value::from(Method::Token.as_str()))]);
                        effects.audit(self.draft(actor, event::DISABLED, Some(contact), method));
                    }
                    Operation::Regenerate => {
                        rec.recovery = issued.cloned();
                        let why = recovery::issued("regenerate");
                        effects.audit(self.draft(actor, event::RECOVERY_CODES_ISSUED, Some(contact), why));
                    }
                    Operation::Verify => {}
                }
                rec.last_step = Some(step);
                rec.failures = 0;
                rec.last_failure_at = None;
                let remaining = recovery::remaining(rec);
                (Ok(Verification::Accepted { method: Method::Token, recovery_codes_remaining: remaining }), true)
            }
        }
    }

    /// Mark (or unmark) a contact as KYC-passed: an operator action, audited
    /// (`kyc.marked` / `kyc.unmarked`).
    pub fn set_kyc_passed(&self, operator: &str, partner: &PartnerId, contact: &ContactId, passed: bool) -> Result<()> {
        self.set_kyc_passed_as(&Self::operator(operator)?, partner, contact, passed)
    }

    pub(crate) fn set_kyc_passed_as(
        &self,
        actor: &Actor,
        partner: &PartnerId,
        contact: &ContactId,
        passed: bool,
    ) -> Result<()> {
        self.partner_record(partner)?;
        let event = if passed { event::KYC_MARKED } else { event::KYC_UNMARKED };
        self.store()
            .update_contact(partner, contact, &mut |rec, effects| {
                effects.audit(self.draft_about(actor, event, contact, rec, Map::new()));
                let changed = rec.kyc_passed != passed;
                rec.kyc_passed = passed;
                changed
            })
            .map_err(Self::internal)
    }

    /// Clear a contact's failure count, lifting a lock or a throttle: an operator action,
    /// audited (`2fa.unlocked`, with the count before), never a partner call.
    pub fn reset_lock(&self, operator: &str, partner: &PartnerId, contact: &ContactId) -> Result<()> {
        let actor = Self::operator(operator)?;
        self.partner_record(partner)?;
        self.store()
            .update_contact(partner, contact, &mut |rec, effects| {
                let before = details([("failures", Value::from(rec.failures))]);
                effects.audit(self.draft_about(&actor, event::UNLOCKED, contact, rec, before));
                let changed = rec.failures != 0 || rec.last_failure_at.is_some();
                rec.failures = 0;
                rec.last_failure_at = None;
                changed
            })
            .map_err(Self::internal)
    }

    /// (2FA required, 2FA enabled) for a contact.
    fn kyc_rule(&self, partner: &PartnerId, contact: &ContactId) -> Result<(bool, bool)> {
        let waived = self.partner_record(partner)?.two_factor_waived;
        let rec = self.store().contact(partner, contact).map_err(Self::internal)?.unwrap_or_default();
        Ok((rec.kyc_passed && !waived, rec.enabled))
    }

    /// Whether 2FA is required: the contact passed KYC and the partner has no waiver.
    pub fn is_2fa_required(&self, partner: &PartnerId, contact: &ContactId) -> Result<bool> {
        Ok(self.kyc_rule(partner, contact)?.0)
    }

    /// Whether the contact may purchase: refused while 2FA is required and not enabled, and
    /// during a purchase hold. [`Service::purchase_check`] tells why and until when.
    pub fn may_purchase(&self, partner: &PartnerId, contact: &ContactId) -> Result<bool> {
        Ok(self.purchase_check(partner, contact)?.is_allowed())
    }

    /// The partner's contacts for which 2FA is required but not enabled, in id order.
    pub fn contacts_requiring_2fa(&self, partner: &PartnerId) -> Result<Vec<ContactId>> {
        if self.partner_record(partner)?.two_factor_waived {
            return Ok(Vec::new());
        }
        self.store().kyc_contacts_without_2fa(partner).map_err(Self::internal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays() {
        let got: Vec<_> = (0..=14).map(throttle_delay).collect();
        assert_eq!(&got[..5], &[None; 5]);
        assert_eq!(
            &got[5..],
            &[
                Some(30),
                Some(60),
                Some(120),
                Some(240),
                Some(480),
                Some(960),
                Some(1920),
                Some(3600),
                Some(3600),
                Some(3600)
            ]
        );
        assert_eq!(throttle_delay(99), Some(3600));
        assert_eq!(throttle_delay(u32::MAX), Some(3600));
    }

    #[test]
    fn waits() {
        let t = 1_000_000;
        assert_eq!(throttle_wait(4, Some(t), t), None, "four failures: no wait");
        assert_eq!(throttle_wait(5, None, t), None);
        assert_eq!(throttle_wait(5, Some(t), t), Some(30));
        assert_eq!(throttle_wait(5, Some(t), t + 29), Some(1));
        assert_eq!(throttle_wait(5, Some(t), t + 30), None);
        assert_eq!(throttle_wait(6, Some(t), t + 1), Some(59));
        // Another server stored the failure a second after this one read its clock: the wait
        // is still the delay, never more.
        assert_eq!(throttle_wait(5, Some(t + 1), t), Some(30));
        assert_eq!(throttle_wait(5, Some(u64::MAX), t), None, "no overflow");
    }
}
