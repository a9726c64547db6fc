//! SPEC 11 on every store: a partner's team (members, invitations), dashboard sessions, and the
//! secret-key roll with its overlap.

#[macro_use]
mod common;

use common::{Backend, Fixture, T0};
use rampart_core::chain::Actor;
use rampart_core::partner::KeyOverlap;
use rampart_core::store::{DashboardSessionRecord, InvitationRecord, MemberRecord, TeamRecord};
use rampart_core::team::{DashboardSession, Member, SignInNext};
use rampart_core::totp::Secret;
use rampart_core::vocab::{Role, SessionStage};
use rampart_core::{ContactId, ErrorKind, PartnerId, StoreError};

conformance!(
    store_round_trips_teams,
    store_dashboard_sessions,
    roll_keeps_the_old_key_to_the_second,
    invitation_to_signed_in,
    sign_in_steps_throttle_and_expiry,
    roles_owners_and_the_last_owner,
    a_members_2fa_is_no_contacts,
    an_operator_resets_a_member_who_then_sets_up_again,
);

/// The authenticator a member sets up, from the setup's manual key.
fn authenticator(setup: &rampart_core::TwoFactorSetup) -> Secret {
    Secret::from_base32(&setup.manual).unwrap()
}

/// An owner invited by the operator, signed in: the session token, the session, their secret.
fn signed_in_owner(f: &Fixture, email: &str) -> (String, DashboardSession, Secret) {
    signed_in(f, email, Role::Owner, "violet tractor lamp 42")
}

fn signed_in(f: &Fixture, email: &str, role: Role, password: &str) -> (String, DashboardSession, Secret) {
    let issued = f.service.invite_member_as_operator("alice", &f.partner, email, role).unwrap();
    let (token, _, setup) = f.service.accept_invitation(issued.token.expose(), password).unwrap();
    let secret = authenticator(&setup);
    let (session, _) = f.service.finish_member_setup(token.expose(), &f.code(&secret, 0)).unwrap();
    f.clock.advance(30);
    (token.expose().to_owned(), session, secret)
}

fn kind<T: std::fmt::Debug>(r: rampart_core::Result<T>) -> ErrorKind {
    r.unwrap_err().kind()
}

fn invitation_to_signed_in(b: Backend) {
    let f = Fixture::new(b);
    let issued = f.service.invite_member_as_operator("alice", &f.partner, " Dana@Example.com ", Role::Owner).unwrap();
    let token = issued.token.expose().to_owned();
    assert!(token.starts_with("inv_") && token.len() == 4 + 43);
    assert_eq!(format!("{:?}", issued.token), "DashboardSecret(<redacted>)");
    let shown = f.service.invitation(&token).unwrap();
    assert_eq!(
        (shown.email.as_str(), shown.role, shown.partner_name.as_str()),
        ("dana@example.com", Role::Owner, "Acme")
    );
    assert_eq!(shown.expires_at, T0 + 72 * 3600);
    // Password rules, each naming the field; the invitation stays usable.
    for (bad, rule) in [
        ("short", "password must be at least 12 characters"),
        ("password1234", "password is too easy to guess; choose another"),
        ("dana-the-strong-one", "password must not contain your email address"),
    ] {
        let e = f.service.accept_invitation(&token, bad).unwrap_err();
        assert_eq!((e.kind(), e.message()), (ErrorKind::InvalidInput, rule));
    }
    let (session_token, session, setup) = f.service.accept_invitation(&token, "violet tractor lamp 42").unwrap();
    assert_eq!(
        (session.stage, session.member.role, session.member.two_factor),
        (SessionStage::Setup, Role::Owner, false)
    );
    assert!(setup.qr_code.starts_with("data:image/png;base64,"));
    // Used up: a second accept (or a look) is 404.
    assert_eq!(kind(f.service.invitation(&token)), ErrorKind::InvitationNotFound);
    assert_eq!(kind(f.service.accept_invitation(&token, "violet tractor lamp 42")), ErrorKind::InvitationNotFound);
    // Not signed in until the authenticator is set up.
    assert_eq!(kind(f.service.dashboard_session(session_token.expose())), ErrorKind::DashboardSessionRequired);
    let secret = authenticator(&setup);
    let wrong = f.wrong_code(&secret);
    assert_eq!(kind(f.service.finish_member_setup(session_token.expose(), &wrong)), ErrorKind::TokenFailed);
    let (session, codes) = f.service.finish_member_setup(session_token.expose(), &f.code(&secret, 0)).unwrap();
    assert_eq!(codes.as_slice().len(), 10);
    assert_eq!((session.stage, session.member.two_factor), (SessionStage::SignedIn, true));
    let again = f.service.dashboard_session(session_token.expose()).unwrap();
    assert_eq!(again.member.email, "dana@example.com");
    assert_eq!(again.csrf_token, session.csrf_token);
    assert!(f.service.dashboard_csrf_ok(session_token.expose(), &session.csrf_token));
    assert!(!f.service.dashboard_csrf_ok(session_token.expose(), "0".repeat(64).as_str()));
    // An email that is a member already cannot be invited again, here or to another team.
    assert_eq!(
        kind(f.service.invite_member_as_operator("alice", &f.partner, "dana@example.com", Role::Viewer)),
        ErrorKind::MemberExists
    );
    let other = f.service.create_partner("Other", rampart_core::Environment::Sandbox).unwrap().partner_id;
    assert_eq!(
        kind(f.service.invite_member_as_operator("alice", &other, "DANA@example.com", Role::Viewer)),
        ErrorKind::MemberExists
    );
    // Bad input names the field; an expired link is 410; a re-invite replaces the old link.
    let e = f.service.invite_member_as_operator("alice", &f.partner, "not-an-email", Role::Viewer).unwrap_err();
    assert_eq!(e.message(), "email must be an email address such as name@example.com");
    let old = f.service.invite_member_as_operator("alice", &f.partner, "eve@example.com", Role::Viewer).unwrap();
    let new = f.service.invite_member_as_operator("alice", &f.partner, "eve@example.com", Role::Developer).unwrap();
    assert_eq!(kind(f.service.invitation(old.token.expose())), ErrorKind::InvitationNotFound);
    f.clock.advance(72 * 3600);
    assert_eq!(kind(f.service.invitation(new.token.expose())), ErrorKind::InvitationExpired);
    assert_eq!(
        kind(f.service.accept_invitation(new.token.expose(), "violet tractor lamp 42")),
        ErrorKind::InvitationExpired
    );
    assert_eq!(kind(f.service.invitation("inv_nonsense")), ErrorKind::InvitationNotFound);
    // Audited: invitations and the join, never an email or a token.
    let rows = f.service.audit_events(&f.partner, None, 0, 100).unwrap().events;
    let events: Vec<&str> = rows.iter().map(|r| r.event.as_str()).collect();
    assert_eq!(events.iter().filter(|e| **e == "member.invited").count(), 3);
    assert_eq!(events.iter().filter(|e| **e == "member.joined").count(), 1);
    let text = serde_json::to_string(&rows.iter().map(|r| (&r.details, &r.contact_id)).collect::<Vec<_>>()).unwrap();
    assert!(!text.contains("example.com") && !text.contains(&token), "{text}");
}

fn sign_in_steps_throttle_and_expiry(b: Backend) {
    let f = Fixture::new(b);
    let (first, _, secret) = signed_in_owner(&f, "dana@example.com");
    f.service.end_dashboard_session(&first).unwrap();
    assert_eq!(kind(f.service.dashboard_session(&first)), ErrorKind::DashboardSessionRequired, "signed out");
    // One answer for an unknown email and a wrong password.
    let unknown = f.service.member_sign_in("nobody@example.com", "violet tractor lamp 42").unwrap_err();
    let wrong = f.service.member_sign_in("dana@example.com", "violet tractor lamp 43").unwrap_err();
    assert_eq!((unknown.kind(), unknown.message()), (ErrorKind::SignInFailed, "Email or password is wrong."));
    assert_eq!((wrong.kind(), wrong.message()), (unknown.kind(), unknown.message()));
    assert_eq!(
        f.service.member_sign_in("dana@example.com", &"x".repeat(1025)).unwrap_err().message(),
        "password must be at most 1024 bytes"
    );
    // The right password leads to the code step.
    let SignInNext::Code(token) = f.service.member_sign_in("DANA@example.com", "violet tractor lamp 42").unwrap()
    else {
        panic!("the code step");
    };
    assert_eq!(kind(f.service.dashboard_session(token.expose())), ErrorKind::DashboardSessionRequired);
    assert_eq!(
        kind(f.service.member_sign_in_code(token.expose(), f.wrong_code(&secret).as_str())),
        ErrorKind::TokenFailed
    );
    let session = f.service.member_sign_in_code(token.expose(), f.code(&secret, 0).as_str()).unwrap();
    assert_eq!(session.stage, SessionStage::SignedIn);
    // 30 idle minutes end it; a request before then starts them again.
    f.clock.advance(29 * 60);
    f.service.dashboard_session(token.expose()).unwrap();
    f.clock.advance(29 * 60);
    f.service.dashboard_session(token.expose()).unwrap();
    f.clock.advance(30 * 60);
    assert_eq!(kind(f.service.dashboard_session(token.expose())), ErrorKind::DashboardSessionRequired);
    // The code step waits 5 minutes.
    let SignInNext::Code(slow) = f.service.member_sign_in("dana@example.com", "violet tractor lamp 42").unwrap() else {
        panic!("the code step");
    };
    f.clock.advance(5 * 60);
    assert_eq!(
        kind(f.service.member_sign_in_code(slow.expose(), f.code(&secret, 0).as_str())),
        ErrorKind::DashboardSessionRequired
    );
    // Wrong passwords are throttled as wrong codes are: the first few free, then waits.
    let mut answers = Vec::new();
    for _ in 0..8 {
        answers.push(kind(f.service.member_sign_in("dana@example.com", "violet tractor lamp 43")));
    }
    assert_eq!(answers.iter().filter(|k| **k == ErrorKind::Throttled).count(), 8 - 5, "{answers:?}");
    let e = f.service.member_sign_in("dana@example.com", "violet tractor lamp 42").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Throttled, "the right password waits too");
    f.clock.advance(e.retry_after().unwrap());
    assert!(matches!(
        f.service.member_sign_in("dana@example.com", "violet tractor lamp 42").unwrap(),
        SignInNext::Code(_)
    ));
}

fn roles_owners_and_the_last_owner(b: Backend) {
    let f = Fixture::new(b);
    let (_, owner, _) = signed_in_owner(&f, "owner@example.com");
    let (_, dev, _) = signed_in(&f, "dev@example.com", Role::Developer, "violet tractor lamp 42");
    let (viewer_token, viewer, _) = signed_in(&f, "viewer@example.com", Role::Viewer, "violet tractor lamp 42");
    let owner = owner.member;
    // The core refuses what the role may not do, whatever the caller shows.
    assert_eq!(kind(f.service.member_roll_secret_key(&viewer.member, KeyOverlap::Now)), ErrorKind::RoleForbidden);
    assert_eq!(kind(f.service.team(&dev.member)), ErrorKind::RoleForbidden);
    assert_eq!(kind(f.service.invite_member(&dev.member, "x@example.com", Role::Owner)), ErrorKind::RoleForbidden);
    assert!(f.service.member_roll_secret_key(&dev.member, KeyOverlap::Hour).unwrap().previous.is_some());
    let team = f.service.team(&owner).unwrap();
    assert_eq!(
        team.members.iter().map(|m| (m.email.as_str(), m.role, m.two_factor)).collect::<Vec<_>>(),
        [
            ("owner@example.com", Role::Owner, true),
            ("dev@example.com", Role::Developer, true),
            ("viewer@example.com", Role::Viewer, true),
        ]
    );
    // The last owner can be neither demoted nor removed, by themselves or anyone.
    assert_eq!(kind(f.service.set_member_role(&owner, owner.id, Role::Viewer)), ErrorKind::LastOwner);
    assert_eq!(kind(f.service.remove_member(&owner, owner.id)), ErrorKind::LastOwner);
    assert_eq!(kind(f.service.set_member_role(&owner, uuid::Uuid::new_v4(), Role::Viewer)), ErrorKind::MemberNotFound);
    f.service.set_member_role(&owner, dev.member.id, Role::Owner).unwrap();
    f.service.set_member_role(&owner, owner.id, Role::Viewer).unwrap();
    // Removing a member ends their session at once.
    let new_owner = f.service.team(&Member { role: Role::Owner, ..dev.member.clone() }).unwrap();
    assert_eq!(new_owner.members[1].role, Role::Owner);
    let dev_owner = Member { role: Role::Owner, ..dev.member.clone() };
    f.service.remove_member(&dev_owner, viewer.member.id).unwrap();
    assert_eq!(kind(f.service.dashboard_session(&viewer_token)), ErrorKind::DashboardSessionRequired);
    // Invitations are listed and revoked by id.
    let issued = f.service.invite_member(&dev_owner, "new@example.com", Role::Viewer).unwrap();
    let listed = f.service.team(&dev_owner).unwrap().invitations;
    assert_eq!(
        listed.iter().map(|i| (i.id, i.email.as_str())).collect::<Vec<_>>(),
        [(issued.invitation.id, "new@example.com")]
    );
    f.service.revoke_invitation(&dev_owner, issued.invitation.id).unwrap();
    assert_eq!(kind(f.service.invitation(issued.token.expose())), ErrorKind::InvitationNotFound);
    assert_eq!(kind(f.service.revoke_invitation(&dev_owner, issued.invitation.id)), ErrorKind::MemberNotFound);
    let rows = f.service.audit_events(&f.partner, None, 0, 200).unwrap().events;
    let changes: Vec<(&str, &str)> = rows
        .iter()
        .filter(|r| r.event.starts_with("member.") && r.event != "member.invited" && r.event != "member.joined")
        .map(|r| (r.event.as_str(), r.actor.as_str()))
        .collect();
    let (o, d) = (format!("member:{}", owner.id), format!("member:{}", dev.member.id));
    assert_eq!(
        changes,
        [
            ("member.role_changed", o.as_str()),
            ("member.role_changed", o.as_str()),
            ("member.removed", d.as_str()),
            ("member.invitation_revoked", d.as_str()),
        ]
    );
}

fn a_members_2fa_is_no_contacts(b: Backend) {
    let f = Fixture::new(b);
    let events = ["2fa.enabled", "2fa.reset", "2fa.locked", "2fa.disabled"];
    f.service.create_webhook_endpoint(&f.partner, "https://93.184.216.34/hooks", &events).unwrap();
    let (_, session, secret) = signed_in_owner(&f, "dana@example.com");
    let as_contact = ContactId::from_uuid(session.member.id);
    // The contact API cannot touch it; the lists never count it; no webhook tells of it.
    let refused = "contactId is a dashboard team member's id, not a contact's";
    assert_eq!(f.service.create_2fa(&f.partner, &as_contact, None).unwrap_err().message(), refused);
    assert_eq!(
        f.service.disable_2fa(&f.partner, &as_contact, f.code(&secret, 0).as_str()).unwrap_err().message(),
        refused
    );
    assert_eq!(
        f.service.verify_2fa(&f.partner, &as_contact, f.code(&secret, 0).as_str()).unwrap_err().message(),
        refused
    );
    f.service.set_kyc_passed("alice", &f.partner, &as_contact, true).unwrap();
    assert!(f.service.contacts_requiring_2fa(&f.partner).unwrap().is_empty());
    assert!(f.service.store().webhook_deliveries(&f.partner).unwrap().is_empty());
    let rows = f.service.audit_events(&f.partner, None, 0, 100).unwrap().events;
    let enabled = rows.iter().find(|r| r.event == "2fa.enabled").unwrap();
    assert_eq!(
        (enabled.contact_id.as_deref(), enabled.actor.as_str()),
        (None, format!("member:{}", session.member.id).as_str())
    );
    // An operator unlocking or resetting the member: audited about no contact, the member named
    // in the details, and still no webhook.
    f.service.reset_lock("alice", &f.partner, &as_contact).unwrap();
    f.service.reset_2fa("alice", &f.partner, &as_contact, "ticket 7: new phone", None).unwrap();
    assert!(f.service.store().webhook_deliveries(&f.partner).unwrap().is_empty());
    let rows = f.service.audit_events(&f.partner, None, 0, 100).unwrap().events;
    let member = serde_json::Value::from(session.member.id.to_string());
    for event in ["kyc.marked", "2fa.unlocked", "2fa.reset"] {
        let row = rows.iter().find(|r| r.event == event).unwrap_or_else(|| panic!("{event} audited"));
        assert_eq!((row.contact_id.as_deref(), row.actor.as_str()), (None, "operator:alice"), "{event}");
        assert_eq!(row.details.get("memberId"), Some(&member), "{event}");
    }
    // A contact's reset still tells the partner.
    let contact = ContactId::from_uuid(uuid::Uuid::new_v4());
    f.service.reset_2fa("alice", &f.partner, &contact, "ticket 8: lost phone", None).unwrap();
    assert_eq!(f.service.store().webhook_deliveries(&f.partner).unwrap().len(), 1);
}

fn member(partner: PartnerId, email: &str, role: Role) -> MemberRecord {
    MemberRecord {
        id: uuid::Uuid::new_v4(),
        partner_id: partner,
        email: email.into(),
        role,
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        created_at: T0,
        failures: 0,
        last_failure_at: None,
    }
}

fn invitation(partner: PartnerId, email: &str, byte: u8) -> InvitationRecord {
    InvitationRecord {
        id: uuid::Uuid::new_v4(),
        token_hash: [byte; 32],
        partner_id: partner,
        email: email.into(),
        role: Role::Developer,
        invited_by: "operator:alice".into(),
        created_at: T0,
        expires_at: T0 + 72 * 3600,
    }
}

fn session(partner: PartnerId, member: uuid::Uuid, byte: u8) -> DashboardSessionRecord {
    DashboardSessionRecord {
        token_hash: [byte; 32],
        partner_id: partner,
        member_id: member,
        stage: SessionStage::Password,
        created_at: T0,
        last_seen_at: T0,
    }
}

fn store_round_trips_teams(b: Backend) {
    let f = Fixture::new(b);
    let s = f.service.store();
    assert_eq!(s.team(&f.partner).unwrap(), TeamRecord::default());
    assert!(!s.update_team(&PartnerId::random(), &mut |_, _| unreachable!()).unwrap());
    let owner = member(f.partner, "owner@example.com", Role::Owner);
    let mut viewer = member(f.partner, "viewer@example.com", Role::Viewer);
    viewer.created_at = T0 + 1;
    viewer.failures = 3;
    viewer.last_failure_at = Some(u64::from(u32::MAX) + 5);
    let invited = invitation(f.partner, "dev@example.com", 7);
    let team = TeamRecord { members: vec![owner.clone(), viewer.clone()], invitations: vec![invited.clone()] };
    let to_write = team.clone();
    assert!(
        s.update_team(&f.partner, &mut |t, _| {
            *t = to_write.clone();
            true
        })
        .unwrap()
    );
    assert_eq!(s.team(&f.partner).unwrap(), team);
    assert_eq!(s.member_by_email("viewer@example.com").unwrap(), Some(viewer.clone()));
    assert_eq!(s.member_by_email("nobody@example.com").unwrap(), None);
    assert_eq!(s.invitation_by_token(&[7; 32]).unwrap(), Some(invited.clone()));
    assert_eq!(s.invitation_by_token(&[8; 32]).unwrap(), None);
    // A closure that declines writes nothing.
    assert!(
        s.update_team(&f.partner, &mut |t, _| {
            t.members.clear();
            false
        })
        .unwrap()
    );
    assert_eq!(s.team(&f.partner).unwrap(), team);
    // One email, one member, over every team; an invitation token is unique too.
    let other = f.service.create_partner("Other", rampart_core::Environment::Sandbox).unwrap().partner_id;
    let taken = member(other, "owner@example.com", Role::Owner);
    let err = s
        .update_team(&other, &mut |t, _| {
            t.members.push(taken.clone());
            true
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    let same_token = invitation(other, "x@example.com", 7);
    let err = s
        .update_team(&other, &mut |t, _| {
            t.invitations.push(same_token.clone());
            true
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert_eq!(s.team(&other).unwrap(), TeamRecord::default(), "nothing of a refused change is kept");
    // Removing a member ends their dashboard sessions, in the same transaction; others stay.
    s.insert_dashboard_session(&session(f.partner, owner.id, 1)).unwrap();
    s.insert_dashboard_session(&session(f.partner, viewer.id, 2)).unwrap();
    assert!(
        s.update_team(&f.partner, &mut |t, _| {
            t.members.retain(|m| m.role != Role::Viewer);
            true
        })
        .unwrap()
    );
    assert!(s.update_dashboard_session(&[2; 32], &mut |_| true).unwrap().is_none(), "the removed member's");
    assert!(s.update_dashboard_session(&[1; 32], &mut |_| false).unwrap().is_some(), "the owner's");
    assert_eq!(s.member_by_email("viewer@example.com").unwrap(), None);
}

fn store_dashboard_sessions(b: Backend) {
    let f = Fixture::new(b);
    let s = f.service.store();
    let owner = member(f.partner, "owner@example.com", Role::Owner);
    let team = TeamRecord { members: vec![owner.clone()], invitations: Vec::new() };
    s.update_team(&f.partner, &mut |t, _| {
        *t = team.clone();
        true
    })
    .unwrap();
    let first = session(f.partner, owner.id, 1);
    s.insert_dashboard_session(&first).unwrap();
    assert!(matches!(s.insert_dashboard_session(&first), Err(StoreError::Conflict(_))));
    let after = s
        .update_dashboard_session(&[1; 32], &mut |r| {
            r.stage = SessionStage::SignedIn;
            r.last_seen_at = T0 + 100;
            true
        })
        .unwrap()
        .unwrap();
    assert_eq!((after.stage, after.last_seen_at), (SessionStage::SignedIn, T0 + 100));
    let read = s.update_dashboard_session(&[1; 32], &mut |_| false).unwrap().unwrap();
    assert_eq!(read, after);
    assert!(s.update_dashboard_session(&[9; 32], &mut |_| unreachable!()).unwrap().is_none());
    let mut idle = session(f.partner, owner.id, 3);
    idle.stage = SessionStage::Setup;
    s.insert_dashboard_session(&idle).unwrap();
    assert_eq!(s.delete_dashboard_sessions_idle_since(T0 + 50).unwrap(), 1, "only the one last seen at T0");
    assert!(s.delete_dashboard_session(&[1; 32]).unwrap());
    assert!(!s.delete_dashboard_session(&[1; 32]).unwrap());
}

fn roll_keeps_the_old_key_to_the_second(b: Backend) {
    let f = Fixture::new(b);
    let creds = f.service.create_partner("Roll", rampart_core::Environment::Sandbox).unwrap();
    let partner = creds.partner_id;
    let first = creds.secret_key.expose().to_owned();
    assert_eq!(f.service.partner(&partner).unwrap().secret_key_last4.as_deref(), Some(&first[first.len() - 4..]));
    let actor = Actor::Member("4f1c3a52-8a3e-4d43-9b7e-1f6c8f3b2a10".into());
    let rolled = f.service.roll_secret_key(&actor, &partner, KeyOverlap::Hour).unwrap();
    let second = rolled.secret_key.expose().to_owned();
    assert_ne!(first, second);
    let previous = rolled.previous.clone().unwrap();
    assert_eq!((previous.last4.as_deref(), previous.expires_at), (Some(&first[first.len() - 4..]), T0 + 3600));
    let shown = f.service.partner(&partner).unwrap();
    assert_eq!(shown.secret_key_last4.as_deref(), Some(&second[second.len() - 4..]));
    assert_eq!(shown.previous_key, rolled.previous);
    let auth = |key: &str| f.service.authenticate(key).map(|a| a.partner_id);
    // The new key works at once; the old one until its expiry, refused from that second on,
    // cached or not.
    assert_eq!(auth(&second).unwrap(), partner);
    assert_eq!(auth(&first).unwrap(), partner);
    f.clock.advance(3599);
    assert_eq!(auth(&first).unwrap(), partner, "the last second of the overlap (and now cached)");
    f.clock.advance(1);
    assert_eq!(auth(&first).unwrap_err().kind(), ErrorKind::Unauthorized, "the cache honours the expiry");
    f.clock.advance(1);
    assert_eq!(auth(&first).unwrap_err().kind(), ErrorKind::Unauthorized);
    assert_eq!(auth(&second).unwrap(), partner);
    // A second roll: at most two keys, so the first is gone for good; "now" ends the second.
    let third = f.service.roll_secret_key(&actor, &partner, KeyOverlap::Now).unwrap();
    assert!(third.previous.is_none());
    assert_eq!(auth(&second).unwrap_err().kind(), ErrorKind::Unauthorized);
    assert_eq!(auth(third.secret_key.expose()).unwrap(), partner);
    // The operator's rotation ends an overlap at once too.
    let fourth = f.service.roll_secret_key(&actor, &partner, KeyOverlap::Week).unwrap();
    assert_eq!(fourth.previous.as_ref().unwrap().expires_at, T0 + 3601 + 7 * 86_400);
    f.service.rotate_keys("alice", &partner).unwrap();
    assert_eq!(auth(third.secret_key.expose()).unwrap_err().kind(), ErrorKind::Unauthorized);
    assert!(f.service.partner(&partner).unwrap().previous_key.is_none());
    // Audited: who, and the overlap chosen; never the key.
    let rows = f.service.audit_events(&partner, None, 0, 100).unwrap().events;
    let rolls: Vec<_> = rows.iter().filter(|r| r.event == "partner.key_rolled").collect();
    assert_eq!(rolls.len(), 3);
    assert_eq!(rolls[0].actor, "member:4f1c3a52-8a3e-4d43-9b7e-1f6c8f3b2a10");
    assert_eq!(rolls.iter().map(|r| r.details["expiresIn"].as_str().unwrap()).collect::<Vec<_>>(), ["1h", "now", "7d"]);
    let text = serde_json::to_string(&rows.iter().map(|r| &r.details).collect::<Vec<_>>()).unwrap();
    for key in [&first, &second] {
        assert!(!text.contains(key.as_str()) && !text.contains(&key[key.len() - 4..]));
    }
    assert_eq!(KeyOverlap::parse("2h").unwrap_err().message(), "expiresIn must be one of now, 1h, 24h, 7d");
}

fn an_operator_resets_a_member_who_then_sets_up_again(b: Backend) {
    let f = Fixture::new(b);
    let (token, session, _) = signed_in_owner(&f, "dana@example.com");
    let id = ContactId::from_uuid(session.member.id);
    // docs/OPERATIONS.md: the member's id is the --contact of the operator's commands.
    assert!(f.service.contact_state(&f.partner, &id).unwrap().enabled);
    f.service.reset_2fa("alice", &f.partner, &id, "ticket 1: phone lost", None).unwrap();
    assert_eq!(kind(f.service.dashboard_session(&token)), ErrorKind::DashboardSessionRequired, "no 2FA, no session");
    let SignInNext::Setup(fresh, setup) =
        f.service.member_sign_in("dana@example.com", "violet tractor lamp 42").unwrap()
    else {
        panic!("a new authenticator's setup");
    };
    let secret = authenticator(&setup);
    f.clock.advance(30);
    let (again, codes) = f.service.finish_member_setup(fresh.expose(), &f.code(&secret, 0)).unwrap();
    assert_eq!((again.stage, codes.as_slice().len()), (SessionStage::SignedIn, 10));
}
