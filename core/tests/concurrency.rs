//! Races on a SQLite file: check and update are one transaction.

mod common;

use std::sync::Arc;
use std::thread;

use common::{Backend, Fixture, contact, together};
use rampart_core::{Config, ContactId, ErrorKind, PartnerId, Verification};

#[test]
fn fifty_threads_one_code_exactly_one_success_200_rounds() {
    let f = Fixture::new(Backend::Sqlite);
    let c = contact();
    let s = f.enabled(&c);
    for round in 0..200 {
        let code = f.code(&s, 0);
        let results = together(50, |_| f.service.verify_2fa(&f.partner, &c, code.as_str()).unwrap());
        let accepted = results.iter().filter(|v| v.is_accepted()).count();
        assert_eq!(accepted, 1, "round {round}");
        assert_eq!(f.record(&c).failures, 0, "replays do not count");
        f.clock.advance(30);
    }
}

#[test]
fn concurrent_enables_exactly_one_success() {
    let f = Fixture::new(Backend::Sqlite);
    for _ in 0..20 {
        let c = contact();
        let s = f.create(&c);
        let code = f.code(&s, 0);
        let results = together(32, |_| f.service.enable_2fa(&f.partner, &c, code.as_str()));
        assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
        for e in results.iter().filter_map(|r| r.as_ref().err()) {
            assert!(matches!(e.kind(), ErrorKind::AlreadyEnabled), "{e:?}");
        }
    }
}

#[test]
fn twenty_wrong_codes_without_throttling_count_exactly_twenty() {
    let f = Fixture::with_config(Backend::Sqlite, Config { throttling: false, ..Config::default() });
    let c = contact();
    let s = f.enabled(&c);
    let wrong = f.wrong_code(&s);
    let results = together(20, |_| f.service.verify_2fa(&f.partner, &c, wrong.as_str()).unwrap());
    assert!(results.iter().all(|v| *v == Verification::Rejected));
    assert_eq!(f.record(&c).failures, 20);
}

#[test]
fn twenty_wrong_codes_with_throttling_evaluate_exactly_five() {
    let f = Fixture::new(Backend::Sqlite);
    let c = contact();
    let s = f.enabled(&c);
    let wrong = f.wrong_code(&s);
    let results = together(20, |_| f.service.verify_2fa(&f.partner, &c, wrong.as_str()));
    let evaluated = results.iter().filter(|r| matches!(r, Ok(Verification::Rejected))).count();
    let refused = results.iter().filter(|r| matches!(r, Err(e) if e.kind() == ErrorKind::Throttled)).count();
    assert_eq!((evaluated, refused), (5, 15));
    assert_eq!(f.record(&c).failures, 5);
}

#[test]
fn two_processes_worth_of_handles_share_one_file() {
    // Two independent stores (as two processes would open) on the same file: the replay and
    // throttle state is in the file, so it holds across them.
    let f = Fixture::new(Backend::Sqlite);
    let path = f.store.path.clone().unwrap();
    let other = rampart_core::Service::builder(rampart_core::SqliteStore::open(&path).unwrap())
        .master_keys(rampart_core::KeyRing::new(1, &[42; 32]))
        .clock(f.clock.clone())
        .build()
        .unwrap();
    let other = Arc::new(other);
    let c = contact();
    let s = f.enabled(&c);
    let code = f.code(&s, 0);
    assert!(f.service.verify_2fa(&f.partner, &c, code.as_str()).unwrap().is_accepted());
    assert_eq!(other.verify_2fa(&f.partner, &c, code.as_str()).unwrap(), Verification::Rejected);
    let results = together(16, |i| {
        let svc = if i % 2 == 0 { &f.service } else { &*other };
        svc.verify_2fa(&f.partner, &c, f.code(&s, 1).as_str()).unwrap()
    });
    assert_eq!(results.iter().filter(|v| v.is_accepted()).count(), 1);
}

#[test]
fn more_readers_than_connections_wait_their_turn() {
    // One read connection and 16 threads reading at once: reads queue for it and all finish
    // (a deadlock here would hang past the deadline and fail).
    use rampart_core::store::{SqliteOptions, SqliteStore, Store};
    let dir = tempfile::tempdir().unwrap();
    let options = SqliteOptions { max_readers: 1, mmap_bytes: 0, ..SqliteOptions::default() };
    let store = Arc::new(SqliteStore::open_with(dir.path().join("r.db"), &options).unwrap());
    assert_eq!(store.options().max_readers, 1);
    let (done, finished) = std::sync::mpsc::channel();
    for _ in 0..16 {
        let (store, done) = (store.clone(), done.clone());
        thread::spawn(move || {
            let counts: Vec<u64> = (0..200).map(|_| store.count_partners().unwrap()).collect();
            done.send(counts.iter().sum::<u64>()).unwrap();
        });
    }
    for _ in 0..16 {
        assert_eq!(finished.recv_timeout(std::time::Duration::from_secs(60)).unwrap(), 0);
    }
}

#[test]
fn sixteen_first_sign_ins_of_one_email_get_one_contact_id() {
    // Two stores on one file (as two processes would open), 16 threads, 16 candidates: every
    // thread gets the same id, one of the candidates, and it is the one kept.
    use rampart_core::store::{SqliteStore, Store};
    let t = Backend::Sqlite.open();
    let other = SqliteStore::open(t.path.as_ref().unwrap()).unwrap();
    let stores: [&dyn Store; 2] = [&*t.store, &other];
    let partner = PartnerId::random();
    for round in 0..50 {
        let email = format!("user{round}@example.com");
        let candidates: Vec<ContactId> = (0..16).map(|_| ContactId::random()).collect();
        let got = together(16, |i| stores[i % 2].contact_for_email(&partner, &email, candidates[i]).unwrap());
        assert!(candidates.contains(&got[0]), "round {round}");
        assert!(got.iter().all(|id| *id == got[0]), "round {round}: {got:?}");
        for store in stores {
            assert_eq!(store.contact_by_email(&partner, &email).unwrap(), Some(got[0]));
        }
    }
}

#[test]
fn concurrent_session_updates_lose_nothing() {
    // 16 threads over two stores on one file each add 1 to a session's last_seen_at 25 times:
    // 400 increments, each seeing the one before.
    use rampart_core::store::{SessionRecord, SqliteStore, Store};
    let t = Backend::Sqlite.open();
    let other = SqliteStore::open(t.path.as_ref().unwrap()).unwrap();
    let stores: [&dyn Store; 2] = [&*t.store, &other];
    let session = SessionRecord {
        token_hash: [7; 32],
        partner_id: PartnerId::random(),
        origin: "https://shop.example".into(),
        created_at: 1000,
        last_seen_at: 1000,
        email: None,
        contact_id: None,
        two_factor_at: None,
    };
    t.store.insert_session(&session).unwrap();
    let seen = together(16, |i| {
        (0..25)
            .map(|_| {
                let after = stores[i % 2].update_session(&session.token_hash, &mut |r| {
                    r.last_seen_at += 1;
                    true
                });
                after.unwrap().unwrap().last_seen_at
            })
            .collect::<Vec<u64>>()
    });
    let mut all: Vec<u64> = seen.into_iter().flatten().collect();
    all.sort_unstable();
    assert_eq!(all, (1001..=1400).collect::<Vec<u64>>(), "each update saw every earlier one");
    let stored = other.update_session(&session.token_hash, &mut |_| false).unwrap().unwrap();
    assert_eq!(stored, SessionRecord { last_seen_at: 1400, ..session });
}
