//! The partner dashboard's people (SPEC 11): team members with a password and their own TOTP,
//! invitations, sign-in and the dashboard's sessions, and what each role may do.
//!
//! A member's TOTP goes through the same lifecycle as a contact's (create, enable with recovery
//! codes, verify with replay protection, throttle and lock), on a 2FA record keyed by the
//! member's id and marked `member`: the contact API never reads or changes it, the contact lists
//! never count it, and no webhook tells of it. Passwords are Argon2id (the `argon2` crate's
//! defaults: 19 MiB, 2 passes), PHC strings at rest. Invitation and session tokens are random
//! 256-bit values; only their SHA-256 is stored. The CSRF token of a session is derived from its
//! token, so it needs no storage and another session's never matches.

use std::fmt;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::audit::details;
use crate::chain::Actor;
use crate::checkout::normalize_email;
use crate::crypto::fill_random;
use crate::error::{Error, ErrorKind, Result};
use crate::ids::{ContactId, PartnerId};
use crate::lifecycle::{TwoFactorSetup, throttle_wait};
use crate::partner::{KeyOverlap, RolledKey};
use crate::recovery::{Factor, RecoveryCodes};
use crate::service::Service;
use crate::store::{DashboardSessionRecord, InvitationRecord, MemberRecord, TeamRecord};
pub use crate::vocab::{Role, SessionStage};

/// How long an invitation link works.
pub const INVITATION_SECS: u64 = 72 * 3600;
/// A dashboard session ends after this long without a request.
pub const SESSION_IDLE_SECS: u64 = 30 * 60;
/// How long the code step of a sign-in waits after the password.
pub const CODE_STEP_SECS: u64 = 5 * 60;
/// Shortest password, in characters.
pub const MIN_PASSWORD_CHARS: usize = 12;
/// Longest password, in bytes (Argon2 hashes any length; a bound keeps a request cheap).
pub const MAX_PASSWORD_BYTES: usize = 1024;
/// Most members and pending invitations of one team, together.
pub const MAX_TEAM: usize = 50;

const INVITATION_PREFIX: &str = "inv_";
const SESSION_PREFIX: &str = "ds_";
const TOKEN_BYTES: usize = 32;

/// Audit events of the team (SPEC 9.1's list, extended for SPEC 11: every dashboard change is
/// audited, actor `member:<id>`, or `operator:<name>` for the command line's invitation).
pub mod event {
    /// An invitation was issued (`invitationId`, `role`).
    pub const MEMBER_INVITED: &str = "member.invited";
    /// An invitation was revoked (`invitationId`).
    pub const INVITATION_REVOKED: &str = "member.invitation_revoked";
    /// An invitation was accepted: the member exists (`memberId`, `role`).
    pub const MEMBER_JOINED: &str = "member.joined";
    /// A member's role changed (`memberId`, `role`).
    pub const MEMBER_ROLE_CHANGED: &str = "member.role_changed";
    /// A member was removed (`memberId`).
    pub const MEMBER_REMOVED: &str = "member.removed";
}

/// Passwords refused as too well known, whatever their length (lower-cased comparison).
const KNOWN_PASSWORDS: [&str; 12] = [
    "password1234",
    "password12345",
    "password123456",
    "123456789012",
    "1234567890123",
    "qwertyuiopas",
    "qwerty123456",
    "letmein12345",
    "iloveyou1234",
    "administrator",
    "correcthorsebatterystaple",
    "changeme1234",
];

/// What the dashboard lets a role do beyond reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Roll the secret key.
    Keys,
    /// Change the widget settings.
    Widget,
    /// Add, delete, test and rotate webhook endpoints; resend messages.
    Webhooks,
    /// Invite, change and remove members; see the team.
    Team,
}

impl Role {
    /// Whether the role has `permission`: owners everything, developers keys, widget and
    /// webhooks, viewers nothing (they read).
    pub const fn may(self, permission: Permission) -> bool {
        match self {
            Self::Owner => true,
            Self::Developer => !matches!(permission, Permission::Team),
            Self::Viewer => false,
        }
    }
}

/// A secret the dashboard hands out once: an invitation's token or a session's. Prints
/// redacted; zeroized on drop.
#[derive(Clone, PartialEq, Eq)]
pub struct DashboardSecret(Zeroizing<String>);

impl DashboardSecret {
    fn generate(prefix: &str) -> Result<Self> {
        let mut bytes = Zeroizing::new([0u8; TOKEN_BYTES]);
        fill_random(&mut bytes[..])?;
        Ok(Self(Zeroizing::new(format!("{prefix}{}", URL_SAFE_NO_PAD.encode(&bytes[..])))))
    }

    /// The text, for the link or the cookie.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for DashboardSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DashboardSecret(<redacted>)")
    }
}

/// The stored hash of a token with `prefix`, or `None` when the text is not such a token.
fn token_hash(prefix: &str, token: &str) -> Option<[u8; 32]> {
    let body = token.strip_prefix(prefix)?;
    let ok = body.len() == 43 && body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    ok.then(|| Sha256::digest(token.as_bytes()).into())
}

/// A team member, as the dashboard shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Id (a UUID).
    pub id: uuid::Uuid,
    /// The partner whose team it is.
    pub partner_id: PartnerId,
    /// Sign-in email.
    pub email: String,
    /// Role.
    pub role: Role,
    /// Their authenticator is set up.
    pub two_factor: bool,
    /// Unix seconds.
    pub created_at: u64,
}

impl Member {
    /// The member as an audit actor.
    pub fn actor(&self) -> Actor {
        Actor::Member(self.id.to_string())
    }

    /// `Ok` when the member's role has `permission`, else 403 "Your role cannot do this.".
    pub fn require(&self, permission: Permission) -> Result<()> {
        if self.role.may(permission) { Ok(()) } else { Err(ErrorKind::RoleForbidden.into()) }
    }

    fn contact(&self) -> ContactId {
        ContactId::from_uuid(self.id)
    }
}

/// A pending invitation, as the Team page lists it (never its token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingInvitation {
    /// Id, to revoke it by.
    pub id: uuid::Uuid,
    /// The invited email.
    pub email: String,
    /// The role it gives.
    pub role: Role,
    /// Unix seconds.
    pub created_at: u64,
    /// Unix seconds from which it is refused.
    pub expires_at: u64,
}

impl From<&InvitationRecord> for PendingInvitation {
    fn from(i: &InvitationRecord) -> Self {
        Self { id: i.id, email: i.email.clone(), role: i.role, created_at: i.created_at, expires_at: i.expires_at }
    }
}

/// A partner's team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    /// Members, oldest first.
    pub members: Vec<Member>,
    /// Invitations not yet accepted (expired ones included, marked by their time), oldest first.
    pub invitations: Vec<PendingInvitation>,
}

/// An invitation just issued: the token for the link (shown once) and what it is.
#[derive(Debug, Clone)]
pub struct IssuedInvitation {
    /// The one-time token; the link is `<public url>/dashboard/#invite=<token>`.
    pub token: DashboardSecret,
    /// The invitation.
    pub invitation: PendingInvitation,
}

/// An invitation, as its link's page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    /// The partner.
    pub partner_id: PartnerId,
    /// The partner's name.
    pub partner_name: String,
    /// The invited email.
    pub email: String,
    /// The role it gives.
    pub role: Role,
    /// Unix seconds from which it is refused.
    pub expires_at: u64,
}

/// A live dashboard session: who, how far, and the CSRF token its changes must carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DashboardSession {
    /// The member.
    pub member: Member,
    /// How far sign-in has come.
    pub stage: SessionStage,
    /// The value of the `X-CSRF-Token` header every change of this session must send.
    pub csrf_token: String,
}

/// What the password step of a sign-in leads to.
#[derive(Debug, Clone)]
pub enum SignInNext {
    /// The authenticator code (the session is at [`SessionStage::Password`]).
    Code(DashboardSecret),
    /// The member never finished setting up an authenticator: a new setup, the session at
    /// [`SessionStage::Setup`].
    Setup(DashboardSecret, TwoFactorSetup),
}

/// The CSRF token of a session just opened (the setup step of a sign-in hands it to the page).
pub fn csrf_token_of(session: &DashboardSecret) -> String {
    csrf_token(session.expose())
}

/// The CSRF token of the session whose token is `session`.
fn csrf_token(session: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"rampart dashboard csrf\0");
    h.update(session.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Check a new password (field `password`): 12 characters or more, at most 1024 bytes, not a
/// well-known password, not containing the email's local part.
pub fn check_password(password: &str, email: &str) -> Result<()> {
    let rule = |why: &str| Error::invalid_input("password", why);
    if password.len() > MAX_PASSWORD_BYTES {
        return Err(rule("must be at most 1024 bytes"));
    }
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(rule("must be at least 12 characters"));
    }
    let lower = password.to_lowercase();
    let first = lower.chars().next().unwrap_or_default();
    if KNOWN_PASSWORDS.contains(&lower.as_str()) || lower.chars().all(|c| c == first) {
        return Err(rule("is too easy to guess; choose another"));
    }
    let local = email.split('@').next().unwrap_or_default();
    if local.chars().count() >= 3 && lower.contains(local) {
        return Err(rule("must not contain your email address"));
    }
    Ok(())
}

fn hash_password(password: &str) -> Result<String> {
    let mut salt = [0u8; 16];
    fill_random(&mut salt)?;
    let salt = SaltString::encode_b64(&salt).map_err(|_| Error::new(ErrorKind::Internal))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|_| Error::new(ErrorKind::Internal))
}

/// Whether `password` matches the PHC string `stored` (false for a string that does not parse).
fn password_matches(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored).is_ok_and(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
}

/// A hash no password matches, verified for an unknown email so its answer takes as long.
const DECOY_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$cmFtcGFydGRlY295c2FsdA$x2P5K0Cw1r9mZ0kQ3m4dY5sVwqk8cZ1xN0bH7jY6tLw";

fn role_text(role: Role) -> Value {
    Value::from(role.as_str())
}

impl Service {
    /// Invite `email` to the partner's team as `role`, on the operator's command line (`partner
    /// invite`); audited as `operator:<name>`. See [`Service::invite_member`].
    pub fn invite_member_as_operator(
        &self,
        operator: &str,
        partner: &PartnerId,
        email: &str,
        role: Role,
    ) -> Result<IssuedInvitation> {
        let actor = Self::operator(operator)?;
        self.invite(&actor, partner, email, role)
    }

    /// Invite `email` to the member's team as `role` (owners only): a one-time token, valid
    /// 72 hours, to send by hand (no mail is sent). Inviting an email again replaces its
    /// pending invitation. 409 when the email is a member already (of any team).
    pub fn invite_member(&self, by: &Member, email: &str, role: Role) -> Result<IssuedInvitation> {
        by.require(Permission::Team)?;
        self.invite(&by.actor(), &by.partner_id, email, role)
    }

    fn invite(&self, actor: &Actor, partner: &PartnerId, email: &str, role: Role) -> Result<IssuedInvitation> {
        let email = normalize_email(email)?;
        if self.store().member_by_email(&email).map_err(Self::internal)?.is_some() {
            return Err(ErrorKind::MemberExists.into());
        }
        let token = DashboardSecret::generate(INVITATION_PREFIX)?;
        let now = self.now();
        let record = InvitationRecord {
            id: uuid::Uuid::new_v4(),
            token_hash: Sha256::digest(token.expose().as_bytes()).into(),
            partner_id: *partner,
            email: email.clone(),
            role,
            invited_by: actor.to_string(),
            created_at: now,
            expires_at: now.saturating_add(INVITATION_SECS),
        };
        let mut refusal = None;
        let found = self
            .store()
            .update_team(partner, &mut |team, effects| {
                team.invitations.retain(|i| i.email != email);
                if team.members.iter().any(|m| m.email == email) {
                    refusal = Some(Error::new(ErrorKind::MemberExists));
                    return false;
                }
                if team.members.len() + team.invitations.len() >= MAX_TEAM {
                    refusal = Some(Error::invalid_input(
                        "email",
                        "cannot be invited: a team holds at most 50 members and invitations",
                    ));
                    return false;
                }
                refusal = None;
                team.invitations.push(record.clone());
                let d = details([("invitationId", Value::from(record.id.to_string())), ("role", role_text(role))]);
                effects.audit(self.draft(actor, event::MEMBER_INVITED, None, d));
                true
            })
            .map_err(Self::internal)?;
        if !found {
            return Err(ErrorKind::PartnerNotFound.into());
        }
        if let Some(e) = refusal {
            return Err(e);
        }
        Ok(IssuedInvitation { token, invitation: PendingInvitation::from(&record) })
    }

    /// The invitation whose link holds `token`: 404 "Invitation not found or already used."
    /// (never issued, accepted, revoked or replaced), 410 "Invitation has expired.".
    pub fn invitation(&self, token: &str) -> Result<Invitation> {
        self.invitation_record(token).map(|(i, name)| Invitation {
            partner_id: i.partner_id,
            partner_name: name,
            email: i.email,
            role: i.role,
            expires_at: i.expires_at,
        })
    }

    fn invitation_record(&self, token: &str) -> Result<(InvitationRecord, String)> {
        let hash = token_hash(INVITATION_PREFIX, token).ok_or(ErrorKind::InvitationNotFound)?;
        let found = self.store().invitation_by_token(&hash).map_err(Self::internal)?;
        let invitation = found.ok_or(ErrorKind::InvitationNotFound)?;
        if self.now() >= invitation.expires_at {
            return Err(ErrorKind::InvitationExpired.into());
        }
        let partner = self.partner_record(&invitation.partner_id)?;
        Ok((invitation, partner.name))
    }

    /// Accept an invitation with a password ([`check_password`]): the member exists, the
    /// invitation is used up, and the member's authenticator setup starts (the QR and manual
    /// key to show); the session returned is at [`SessionStage::Setup`] until
    /// [`Service::finish_member_setup`].
    pub fn accept_invitation(
        &self,
        token: &str,
        password: &str,
    ) -> Result<(DashboardSecret, DashboardSession, TwoFactorSetup)> {
        let (invitation, _) = self.invitation_record(token)?;
        check_password(password, &invitation.email)?;
        let password_hash = hash_password(password)?;
        let now = self.now();
        let record = MemberRecord {
            id: uuid::Uuid::new_v4(),
            partner_id: invitation.partner_id,
            email: invitation.email.clone(),
            role: invitation.role,
            password_hash,
            created_at: now,
            failures: 0,
            last_failure_at: None,
        };
        let actor = Actor::Member(record.id.to_string());
        let mut taken = false;
        let written = self.store().update_team(&invitation.partner_id, &mut |team, effects| {
            let before = team.invitations.len();
            team.invitations.retain(|i| i.token_hash != invitation.token_hash);
            taken = team.invitations.len() == before;
            if taken {
                return false;
            }
            team.members.push(record.clone());
            let d = details([
                ("memberId", Value::from(record.id.to_string())),
                ("invitationId", Value::from(invitation.id.to_string())),
                ("role", role_text(record.role)),
            ]);
            effects.audit(self.draft(&actor, event::MEMBER_JOINED, None, d));
            true
        });
        match written {
            Err(crate::store::StoreError::Conflict(_)) => return Err(ErrorKind::MemberExists.into()),
            Err(e) => return Err(Self::internal(e)),
            Ok(false) => return Err(ErrorKind::PartnerNotFound.into()),
            Ok(true) if taken => return Err(ErrorKind::InvitationNotFound.into()),
            Ok(true) => {}
        }
        let member = member_of(&record, false);
        let setup = self.create_2fa_as(&actor, &member.partner_id, &member.contact(), None, &member.email)?;
        let (secret, session) = self.open_dashboard_session(&member, SessionStage::Setup)?;
        Ok((secret, session, setup))
    }

    /// Finish a member's authenticator setup with a code from it (the session at
    /// [`SessionStage::Setup`]): 2FA is on, the recovery codes are returned to show once, and
    /// the session is signed in.
    pub fn finish_member_setup(&self, token: &str, code: &str) -> Result<(DashboardSession, RecoveryCodes)> {
        let session = self.dashboard_session_at(token, SessionStage::Setup)?;
        let member = &session.member;
        let codes = self.enable_2fa_as(&member.actor(), &member.partner_id, &member.contact(), code.into())?;
        let session = self.advance_session(token, SessionStage::SignedIn)?;
        Ok((session, codes))
    }

    /// The password step of the dashboard's sign-in. A wrong email or password is one answer,
    /// 401 "Email or password is wrong.", that takes as long either way; wrong passwords are
    /// throttled per member as SPEC 2's codes are (429 with the seconds to wait).
    pub fn member_sign_in(&self, email: &str, password: &str) -> Result<SignInNext> {
        let email = normalize_email(email)?;
        if password.len() > MAX_PASSWORD_BYTES {
            return Err(Error::invalid_input("password", "must be at most 1024 bytes"));
        }
        let Some(record) = self.store().member_by_email(&email).map_err(Self::internal)? else {
            let _ = password_matches(password, DECOY_HASH);
            return Err(ErrorKind::SignInFailed.into());
        };
        let now = self.now();
        if let Some(wait) = throttle_wait(record.failures, record.last_failure_at, now) {
            return Err(Error::throttled(wait));
        }
        let right = password_matches(password, &record.password_hash);
        if !right || record.failures > 0 {
            self.store()
                .update_team(&record.partner_id, &mut |team, _| {
                    let Some(m) = team.members.iter_mut().find(|m| m.id == record.id) else { return false };
                    if right {
                        (m.failures, m.last_failure_at) = (0, None);
                    } else {
                        m.failures = m.failures.saturating_add(1);
                        m.last_failure_at = Some(now);
                    }
                    true
                })
                .map_err(Self::internal)?;
        }
        if !right {
            return Err(ErrorKind::SignInFailed.into());
        }
        let enabled = self.store().contact_enabled(&record.partner_id, &ContactId::from_uuid(record.id));
        let member = member_of(&record, enabled.map_err(Self::internal)? == Some(true));
        if member.two_factor {
            let (secret, _) = self.open_dashboard_session(&member, SessionStage::Password)?;
            return Ok(SignInNext::Code(secret));
        }
        let setup = self.create_2fa_as(&member.actor(), &member.partner_id, &member.contact(), None, &member.email)?;
        let (secret, _) = self.open_dashboard_session(&member, SessionStage::Setup)?;
        Ok(SignInNext::Setup(secret, setup))
    }

    /// The code step of the sign-in (the session at [`SessionStage::Password`], within 5
    /// minutes of the password): an authenticator code or a recovery code, under the section 2
    /// rules (replay, throttle, lock). A wrong code is 401 "Google 2FA failed" and the step
    /// can be tried again.
    pub fn member_sign_in_code(&self, token: &str, factor: impl Into<Factor>) -> Result<DashboardSession> {
        let session = self.dashboard_session_at(token, SessionStage::Password)?;
        let member = &session.member;
        match self.verify_2fa_as(&member.actor(), &member.partner_id, &member.contact(), factor.into())? {
            crate::Verification::Accepted { .. } => self.advance_session(token, SessionStage::SignedIn),
            crate::Verification::Rejected => Err(ErrorKind::TokenFailed.into()),
        }
    }

    /// The signed-in session whose cookie holds `token`, touched (its 30 idle minutes start
    /// again): 401 "Sign in to continue." when there is none, it is idle too long, it is not
    /// signed in yet, its member was removed, or the member's 2FA was reset.
    pub fn dashboard_session(&self, token: &str) -> Result<DashboardSession> {
        self.dashboard_session_at(token, SessionStage::SignedIn)
    }

    /// Whether `given` is the CSRF token of the session `token` (constant time).
    pub fn dashboard_csrf_ok(&self, token: &str, given: &str) -> bool {
        csrf_token(token).as_bytes().ct_eq(given.as_bytes()).into()
    }

    /// End a dashboard session (sign-out); nothing happens for an unknown one.
    pub fn end_dashboard_session(&self, token: &str) -> Result<()> {
        if let Some(hash) = token_hash(SESSION_PREFIX, token) {
            self.store().delete_dashboard_session(&hash).map_err(Self::internal)?;
        }
        Ok(())
    }

    fn open_dashboard_session(
        &self,
        member: &Member,
        stage: SessionStage,
    ) -> Result<(DashboardSecret, DashboardSession)> {
        let now = self.now();
        self.store()
            .delete_dashboard_sessions_idle_since(now.saturating_sub(SESSION_IDLE_SECS))
            .map_err(Self::internal)?;
        let secret = DashboardSecret::generate(SESSION_PREFIX)?;
        let record = DashboardSessionRecord {
            token_hash: Sha256::digest(secret.expose().as_bytes()).into(),
            partner_id: member.partner_id,
            member_id: member.id,
            stage,
            created_at: now,
            last_seen_at: now,
        };
        self.store().insert_dashboard_session(&record).map_err(Self::internal)?;
        let session = DashboardSession { member: member.clone(), stage, csrf_token: csrf_token(secret.expose()) };
        Ok((secret, session))
    }

    /// The session `token` at `stage`, touched; 401 otherwise.
    fn dashboard_session_at(&self, token: &str, stage: SessionStage) -> Result<DashboardSession> {
        let ended = || Error::new(ErrorKind::DashboardSessionRequired);
        let hash = token_hash(SESSION_PREFIX, token).ok_or_else(ended)?;
        let now = self.now();
        let mut live = false;
        let found = self
            .store()
            .update_dashboard_session(&hash, &mut |s| {
                let idle = now.saturating_sub(s.last_seen_at) >= SESSION_IDLE_SECS;
                let stale_code =
                    s.stage == SessionStage::Password && now.saturating_sub(s.created_at) >= CODE_STEP_SECS;
                live = !idle && !stale_code && s.stage == stage;
                if live && s.last_seen_at != now {
                    s.last_seen_at = now;
                    return true;
                }
                false
            })
            .map_err(Self::internal)?;
        let record = found.ok_or_else(ended)?;
        if !live {
            return Err(ended());
        }
        let team = self.store().team(&record.partner_id).map_err(Self::internal)?;
        let m = team.members.iter().find(|m| m.id == record.member_id).ok_or_else(ended)?;
        let enabled = self.store().contact_enabled(&m.partner_id, &ContactId::from_uuid(m.id));
        let member = member_of(m, enabled.map_err(Self::internal)? == Some(true));
        // A signed-in session needs the member's authenticator: an operator's reset ends it.
        if stage == SessionStage::SignedIn && !member.two_factor {
            return Err(ended());
        }
        Ok(DashboardSession { member, stage, csrf_token: csrf_token(token) })
    }

    fn advance_session(&self, token: &str, to: SessionStage) -> Result<DashboardSession> {
        let hash = token_hash(SESSION_PREFIX, token).ok_or(ErrorKind::DashboardSessionRequired)?;
        let now = self.now();
        self.store()
            .update_dashboard_session(&hash, &mut |s| {
                (s.stage, s.last_seen_at) = (to, now);
                true
            })
            .map_err(Self::internal)?
            .ok_or(ErrorKind::DashboardSessionRequired)?;
        self.dashboard_session_at(token, to)
    }

    /// The member's team (owners only).
    pub fn team(&self, by: &Member) -> Result<Team> {
        by.require(Permission::Team)?;
        let team = self.store().team(&by.partner_id).map_err(Self::internal)?;
        let mut members = Vec::with_capacity(team.members.len());
        for m in &team.members {
            let enabled = self.store().contact_enabled(&m.partner_id, &ContactId::from_uuid(m.id));
            members.push(member_of(m, enabled.map_err(Self::internal)? == Some(true)));
        }
        Ok(Team { members, invitations: team.invitations.iter().map(PendingInvitation::from).collect() })
    }

    /// Change a member's role (owners only); 409 "A team needs at least one owner." when it
    /// would leave none, 404 "Member not found." for another team's or an unknown id.
    pub fn set_member_role(&self, by: &Member, member: uuid::Uuid, role: Role) -> Result<()> {
        by.require(Permission::Team)?;
        self.change_team(by, |team, effects| {
            let target = team.members.iter_mut().find(|m| m.id == member).ok_or(ErrorKind::MemberNotFound)?;
            if target.role == role {
                return Ok(false);
            }
            target.role = role;
            if !team.members.iter().any(|m| m.role == Role::Owner) {
                return Err(ErrorKind::LastOwner.into());
            }
            let d = details([("memberId", Value::from(member.to_string())), ("role", role_text(role))]);
            effects.audit(self.draft(&by.actor(), event::MEMBER_ROLE_CHANGED, None, d));
            Ok(true)
        })
    }

    /// Remove a member (owners only; an owner may remove themselves while another owner
    /// remains): their sessions end at once and their authenticator record is erased.
    pub fn remove_member(&self, by: &Member, member: uuid::Uuid) -> Result<()> {
        by.require(Permission::Team)?;
        self.change_team(by, |team, effects| {
            let before = team.members.len();
            team.members.retain(|m| m.id != member);
            if team.members.len() == before {
                return Err(ErrorKind::MemberNotFound.into());
            }
            if !team.members.iter().any(|m| m.role == Role::Owner) {
                return Err(ErrorKind::LastOwner.into());
            }
            let d = details([("memberId", Value::from(member.to_string()))]);
            effects.audit(self.draft(&by.actor(), event::MEMBER_REMOVED, None, d));
            Ok(true)
        })?;
        // The member's 2FA record: secrets and codes erased (the row, marked `member`, stays
        // out of every contact list).
        self.store()
            .update_contact(&by.partner_id, &ContactId::from_uuid(member), &mut |rec, _| {
                *rec = crate::store::ContactRecord { member: true, ..Default::default() };
                true
            })
            .map_err(Self::internal)
    }

    /// Revoke a pending invitation (owners only); 404 "Member not found." for an unknown id.
    pub fn revoke_invitation(&self, by: &Member, invitation: uuid::Uuid) -> Result<()> {
        by.require(Permission::Team)?;
        self.change_team(by, |team, effects| {
            let before = team.invitations.len();
            team.invitations.retain(|i| i.id != invitation);
            if team.invitations.len() == before {
                return Err(ErrorKind::MemberNotFound.into());
            }
            let d = details([("invitationId", Value::from(invitation.to_string()))]);
            effects.audit(self.draft(&by.actor(), event::INVITATION_REVOKED, None, d));
            Ok(true)
        })
    }

    /// One team change through `change`, whose error refuses it.
    fn change_team(
        &self,
        by: &Member,
        mut change: impl FnMut(&mut TeamRecord, &mut crate::store::Effects) -> Result<bool>,
    ) -> Result<()> {
        let mut refusal = None;
        self.store()
            .update_team(&by.partner_id, &mut |team, effects| match change(team, effects) {
                Ok(write) => {
                    refusal = None;
                    write
                }
                Err(e) => {
                    refusal = Some(e);
                    *effects = crate::store::Effects::default();
                    false
                }
            })
            .map_err(Self::internal)?;
        refusal.map_or(Ok(()), Err)
    }

    /// Roll the partner's secret key as a member (owners and developers): see
    /// [`Service::roll_secret_key`].
    pub fn member_roll_secret_key(&self, by: &Member, overlap: KeyOverlap) -> Result<RolledKey> {
        by.require(Permission::Keys)?;
        self.roll_secret_key(&by.actor(), &by.partner_id, overlap)
    }
}

fn member_of(m: &MemberRecord, two_factor: bool) -> Member {
    Member {
        id: m.id,
        partner_id: m.partner_id,
        email: m.email.clone(),
        role: m.role,
        two_factor,
        created_at: m.created_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_follow_the_rules() {
        let email = "dana@example.com";
        assert_eq!(check_password("short", email).unwrap_err().message(), "password must be at least 12 characters");
        let long = "a".repeat(1025);
        assert_eq!(check_password(&long, email).unwrap_err().message(), "password must be at most 1024 bytes");
        for easy in ["Password1234", "aaaaaaaaaaaaaaaa"] {
            assert_eq!(
                check_password(easy, email).unwrap_err().message(),
                "password is too easy to guess; choose another"
            );
        }
        assert_eq!(
            check_password("dana-is-my-name-ok", email).unwrap_err().message(),
            "password must not contain your email address"
        );
        assert!(check_password("violet tractor lamp 42", email).is_ok());
        // Twelve characters, not twelve bytes.
        assert!(check_password("ééééééfghijk", email).is_ok());
        assert_eq!(check_password("éééééé", email).unwrap_err().message(), "password must be at least 12 characters");
    }

    #[test]
    fn hashes_verify_and_the_decoy_matches_nothing() {
        let stored = hash_password("violet tractor lamp 42").unwrap();
        assert!(stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{stored}");
        assert!(password_matches("violet tractor lamp 42", &stored));
        assert!(!password_matches("violet tractor lamp 43", &stored));
        assert!(PasswordHash::new(DECOY_HASH).is_ok());
        assert!(!password_matches("", DECOY_HASH));
        assert!(!password_matches("anything", "not a hash"));
    }

    #[test]
    fn roles_and_tokens() {
        assert!(Role::Owner.may(Permission::Team));
        assert!(Role::Developer.may(Permission::Keys) && !Role::Developer.may(Permission::Team));
        assert!(!Role::Viewer.may(Permission::Widget));
        let s = DashboardSecret::generate(SESSION_PREFIX).unwrap();
        assert!(token_hash(SESSION_PREFIX, s.expose()).is_some());
        assert!(token_hash(INVITATION_PREFIX, s.expose()).is_none(), "a session token is no invitation");
        assert_eq!(format!("{s:?}"), "DashboardSecret(<redacted>)");
        let other = DashboardSecret::generate(SESSION_PREFIX).unwrap();
        assert_ne!(csrf_token(s.expose()), csrf_token(other.expose()));
        assert_eq!(csrf_token(s.expose()).len(), 64);
    }
}
