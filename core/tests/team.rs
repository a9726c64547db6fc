//! SPEC 11 on every store: a partner's team (members, invitations), dashboard sessions, and the
//! secret-key roll with its overlap.

#[macro_use]
mod common;

use common::{Backend, Fixture, T0};
use rampart_core::chain::Actor;
use rampart_core::partner::KeyOverlap;
use rampart_core::store::{DashboardSessionRecord, InvitationRecord, MemberRecord, TeamRecord};
use rampart_core::vocab::{Role, SessionStage};
use rampart_core::{ErrorKind, PartnerId, StoreError};

conformance!(store_round_trips_teams, store_dashboard_sessions, roll_keeps_the_old_key_to_the_second);

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
