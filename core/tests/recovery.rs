//! SPEC section 8 on every store: recovery codes (issue, format, input normalisation, one use,
//! reuse, their own throttle, the lock bypass, regenerate), the operator's four-eyes reset, the
//! support view, and the purchase hold.

#[macro_use]
mod common;

use common::{Backend, Fixture, contact, together};
use rampart_core::totp::Secret;
use rampart_core::{
    Config, ContactId, ContactState, Environment, Error, ErrorKind, Factor, Method, PartnerId, PurchaseCheck,
    Verification,
};

conformance!(
    enable_issues_ten_codes_shown_once,
    verify_by_recovery_code_uses_it_up,
    every_input_form_of_a_code_verifies,
    malformed_and_foreign_codes_do_not_verify,
    reuse_is_refused_uncounted_and_audited,
    recovery_throttle_is_its_own,
    a_recovery_code_disables_a_locked_contact,
    disable_by_recovery_code_erases_and_holds,
    regenerate_replaces_the_set,
    both_factors_are_refused,
    reset_rules_four_eyes_and_prior_state,
    reset_keeps_the_last_step,
    reset_of_an_unknown_contact_and_partner,
    the_hold_ends_at_its_time,
    fifty_concurrent_uses_of_one_code_one_success,
);

fn enabled_with_codes(f: &Fixture, c: &ContactId) -> (Secret, Vec<String>) {
    let secret = f.create(c);
    let codes = f.service.enable_2fa(&f.partner, c, f.code(&secret, 0).as_str()).unwrap();
    f.clock.advance(30);
    (secret, codes.as_slice().to_vec())
}

fn verify(f: &Fixture, c: &ContactId, code: &str) -> Result<Verification, Error> {
    f.service.verify_2fa(&f.partner, c, Factor::recovery_code(code))
}

fn accepted(remaining: u32) -> Verification {
    Verification::Accepted { method: Method::RecoveryCode, recovery_codes_remaining: remaining }
}

fn events(f: &Fixture, c: &ContactId) -> Vec<(String, String)> {
    let rows = f.service.audit_events(&f.partner, Some(c), 0, 500).unwrap().events;
    rows.into_iter().map(|r| (r.event, r.details.to_string())).collect()
}

fn kind<T: std::fmt::Debug>(r: Result<T, Error>) -> ErrorKind {
    r.expect_err("an error").kind()
}

fn enable_issues_ten_codes_shown_once(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    assert_eq!(f.service.status_with_recovery_codes(&f.partner, &c).unwrap(), (false, 0));
    let (_, codes) = enabled_with_codes(&f, &c);
    assert_eq!(codes.len(), 10);
    let distinct: std::collections::HashSet<_> = codes.iter().collect();
    assert_eq!(distinct.len(), 10);
    for code in &codes {
        assert_eq!(code.len(), 29, "{code}");
        assert!(
            code.split('-')
                .all(|g| g.len() == 4 && g.bytes().all(|b| rampart_core::recovery::ALPHABET.as_bytes().contains(&b))),
            "{code}"
        );
    }
    assert_eq!(f.service.status_with_recovery_codes(&f.partner, &c).unwrap(), (true, 10));
    // Stored as hashes only: the record's Debug and its bytes never hold a code.
    let rec = f.record(&c);
    let shown = format!("{rec:?}");
    let stored = rec.recovery.as_ref().unwrap().to_bytes();
    for code in &codes {
        let plain = code.replace('-', "");
        assert!(!shown.contains(&plain) && !shown.contains(code.as_str()));
        assert!(!stored.windows(plain.len()).any(|w| w == plain.as_bytes()));
    }
    let issued = events(&f, &c);
    assert_eq!(issued[2], ("recovery_codes.issued".to_owned(), r#"{"reason":"enable"}"#.to_owned()));
}

fn verify_by_recovery_code_uses_it_up(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let (secret, codes) = enabled_with_codes(&f, &c);
    assert_eq!(verify(&f, &c, &codes[0]).unwrap(), accepted(9));
    assert_eq!(verify(&f, &c, &codes[5]).unwrap(), accepted(8));
    // 2FA stays on; a token verify answers its method and the same count.
    assert_eq!(
        f.service.verify_2fa(&f.partner, &c, f.code(&secret, 0).as_str()).unwrap(),
        Verification::Accepted { method: Method::Token, recovery_codes_remaining: 8 }
    );
    assert_eq!(f.service.status_with_recovery_codes(&f.partner, &c).unwrap(), (true, 8));
    let tail: Vec<_> = events(&f, &c).into_iter().skip(3).collect();
    assert_eq!(
        tail,
        [
            ("recovery_code.used".to_owned(), r#"{"remaining":9}"#.to_owned()),
            ("recovery_code.used".to_owned(), r#"{"remaining":8}"#.to_owned()),
        ]
    );
}

fn every_input_form_of_a_code_verifies(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let (_, codes) = enabled_with_codes(&f, &c);
    let to_confusable = |s: &str| s.replace('0', "O").replace('1', "I");
    let forms = [
        codes[0].to_lowercase(),
        codes[1].replace('-', " "),
        codes[2].replace('-', ""),
        format!(" \t{}\n", codes[3]),
        to_confusable(&codes[4]),
        codes[5].replace('1', "l"),
        codes[6].replace('-', "--"),
    ];
    for (i, form) in forms.iter().enumerate() {
        assert_eq!(verify(&f, &c, form).unwrap(), accepted(9 - i as u32), "{i}");
    }
}

fn malformed_and_foreign_codes_do_not_verify(b: Backend) {
    let f = Fixture::new(b);
    let (c, d) = (contact(), contact());
    let (_, codes) = enabled_with_codes(&f, &c);
    let (_, other_codes) = enabled_with_codes(&f, &d);
    let other_partner = f.service.create_partner("Other", Environment::Sandbox).unwrap().partner_id;
    let plain = codes[0].replace('-', "");
    let bad = [
        plain[..23].to_owned(),               // 23 symbols
        format!("{plain}0"),                  // 25 symbols
        format!("{}U", &plain[..23]),         // U is not in the alphabet
        format!("{}Ж", &plain[..23]),         // another alphabet
        format!("{}{plain}", " ".repeat(41)), // over 64 bytes
        "０".repeat(24),                      // full-width digits
        other_codes[0].clone(),               // another contact's code
        String::from("*"),
    ];
    for (i, code) in bad.iter().enumerate() {
        assert_eq!(verify(&f, &c, code).unwrap(), Verification::Rejected, "{code:?}");
        assert_eq!(f.record(&c).recovery_failures, i as u32 + 1);
        f.clock.advance(3600); // past the back-off
    }
    // Another partner's contact of the same id has no codes at all.
    assert_eq!(kind(f.service.verify_2fa(&other_partner, &c, Factor::recovery_code(&codes[0]))), ErrorKind::NotEnabled);
    // An empty code is not given: the missing-token answer, not counted.
    assert_eq!(kind(verify(&f, &c, "  ")), ErrorKind::TokenMissing);
    // Wrong codes never touched the authenticator counter, and the codes still work.
    assert_eq!(f.record(&c).failures, 0);
    f.clock.advance(3600);
    assert_eq!(verify(&f, &c, &codes[0]).unwrap(), accepted(9));
    assert_eq!(f.record(&c).recovery_failures, 0, "a success resets the recovery counter");
}

fn reuse_is_refused_uncounted_and_audited(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let (_, codes) = enabled_with_codes(&f, &c);
    assert!(verify(&f, &c, &codes[0]).unwrap().is_accepted());
    assert_eq!(verify(&f, &c, &codes[0]).unwrap(), Verification::Rejected);
    assert_eq!(verify(&f, &c, &codes[0].to_lowercase()).unwrap(), Verification::Rejected);
    assert_eq!(kind(f.service.disable_2fa(&f.partner, &c, Factor::recovery_code(&codes[0]))), ErrorKind::TokenFailed);
    let rec = f.record(&c);
    assert_eq!((rec.recovery_failures, rec.failures, rec.enabled), (0, 0, true), "a reuse is not a failure");
    let reused = events(&f, &c).iter().filter(|(e, _)| e == "recovery_code.reused").count();
    assert_eq!(reused, 3);
    let text = f.service.metrics_text();
    assert!(text.contains("rampart_recovery_code_reuse_total 3"), "{text}");
    assert!(
        text.contains(r#"rampart_2fa_attempts_total{operation="verify",factor="recovery_code",result="replayed"} 2"#),
        "{text}"
    );
}

fn recovery_throttle_is_its_own(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let (secret, codes) = enabled_with_codes(&f, &c);
    let wrong = "0000-0000-0000-0000-0000-0000";
    for _ in 0..5 {
        assert_eq!(verify(&f, &c, wrong).unwrap(), Verification::Rejected);
    }
    // The 5th failure throttles recovery codes for 30 s (a right one too), not tokens.
    let e = verify(&f, &c, &codes[0]).unwrap_err();
    assert_eq!(
        (e.kind(), e.message(), e.retry_after()),
        (ErrorKind::Throttled, "Too many failed 2FA attempts, try again in 30 seconds", Some(30))
    );
    assert!(f.service.verify_2fa(&f.partner, &c, f.code(&secret, 0).as_str()).unwrap().is_accepted());
    assert_eq!(f.record(&c).recovery_failures, 5, "a token success resets only its own counter");
    // Five wrong tokens throttle tokens; recovery codes stay refused on their own clock only.
    for _ in 0..5 {
        f.service.verify_2fa(&f.partner, &c, f.wrong_code(&secret).as_str()).unwrap();
    }
    assert_eq!(kind(f.service.verify_2fa(&f.partner, &c, f.code(&secret, 1).as_str())), ErrorKind::Throttled);
    f.clock.advance(30);
    assert_eq!(verify(&f, &c, &codes[0]).unwrap(), accepted(9));
    let rec = f.record(&c);
    assert_eq!((rec.failures, rec.recovery_failures), (5, 0));
}

fn a_recovery_code_disables_a_locked_contact(b: Backend) {
    let f = Fixture::with_config(b, Config::default());
    let c = contact();
    let (secret, codes) = enabled_with_codes(&f, &c);
    for _ in 0..100 {
        let _ = f.service.verify_2fa(&f.partner, &c, f.wrong_code(&secret).as_str());
        f.clock.advance(3600);
    }
    assert_eq!(f.record(&c).failures, 100);
    assert_eq!(kind(f.service.verify_2fa(&f.partner, &c, f.code(&secret, 0).as_str())), ErrorKind::Locked);
    let state = f.service.contact_state(&f.partner, &c).unwrap();
    assert!(state.locked && state.enabled);
    // Locked for authenticator codes only: a recovery code verifies, then disables.
    assert_eq!(verify(&f, &c, &codes[0]).unwrap(), accepted(9));
    assert_eq!(kind(f.service.verify_2fa(&f.partner, &c, f.code(&secret, 0).as_str())), ErrorKind::Locked);
    f.service.disable_2fa(&f.partner, &c, Factor::recovery_code(&codes[1])).unwrap();
    let state = f.service.contact_state(&f.partner, &c).unwrap();
    assert!(!state.locked && !state.enabled);
    assert_eq!((state.failures, state.recovery_failures, state.recovery_codes_remaining), (0, 0, 0));
}

fn disable_by_recovery_code_erases_and_holds(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let (_, codes) = enabled_with_codes(&f, &c);
    f.service.disable_2fa(&f.partner, &c, Factor::recovery_code(&codes[3])).unwrap();
    let rec = f.record(&c);
    assert!(!rec.enabled && rec.secret.is_none() && rec.pending.is_none() && rec.recovery.is_none());
    assert_eq!(rec.hold_until, Some(f.now() + 86_400));
    let tail: Vec<_> = events(&f, &c).into_iter().skip(3).collect();
    assert_eq!(
        tail,
        [
            ("recovery_code.used".to_owned(), r#"{"remaining":0}"#.to_owned()),
            ("2fa.disabled".to_owned(), r#"{"method":"recoveryCode"}"#.to_owned()),
        ]
    );
    // Every code went with it.
    assert_eq!(kind(verify(&f, &c, &codes[4])), ErrorKind::NotEnabled);
    assert_eq!(f.service.purchase_check(&f.partner, &c).unwrap(), PurchaseCheck::OnHold { until: f.now() + 86_400 });
    // A disable by token erases the codes too but starts no hold.
    let d = contact();
    let (secret, _) = enabled_with_codes(&f, &d);
    f.service.disable_2fa(&f.partner, &d, f.code(&secret, 0).as_str()).unwrap();
    assert_eq!((f.record(&d).recovery, f.record(&d).hold_until), (None, None));
    assert!(f.service.may_purchase(&f.partner, &d).unwrap());
}

fn regenerate_replaces_the_set(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    assert_eq!(kind(f.service.regenerate_recovery_codes(&f.partner, &c, "123456")), ErrorKind::NotEnabled);
    let (secret, old) = enabled_with_codes(&f, &c);
    assert!(verify(&f, &c, &old[0]).unwrap().is_accepted());
    assert_eq!(
        kind(f.service.regenerate_recovery_codes(&f.partner, &c, f.wrong_code(&secret).as_str())),
        ErrorKind::TokenFailed
    );
    assert_eq!(kind(f.service.regenerate_recovery_codes(&f.partner, &c, "")), ErrorKind::TokenMissing);
    let code = f.code(&secret, 0);
    let new = f.service.regenerate_recovery_codes(&f.partner, &c, code.as_str()).unwrap();
    // The proving code's step is used up, like any accepted code.
    assert_eq!(kind(f.service.regenerate_recovery_codes(&f.partner, &c, code.as_str())), ErrorKind::TokenFailed);
    assert_eq!(new.len(), 10);
    assert_eq!(f.service.status_with_recovery_codes(&f.partner, &c).unwrap(), (true, 10));
    // A code of the replaced set is just wrong now (counted), a new one works.
    assert_eq!(verify(&f, &c, &old[1]).unwrap(), Verification::Rejected);
    assert_eq!(f.record(&c).recovery_failures, 1);
    assert_eq!(verify(&f, &c, &new.as_slice()[0]).unwrap(), accepted(9));
    let issued: Vec<_> = events(&f, &c).into_iter().filter(|(e, _)| e == "recovery_codes.issued").collect();
    assert_eq!(issued[1].1, r#"{"reason":"regenerate"}"#);
}

fn both_factors_are_refused(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let (secret, codes) = enabled_with_codes(&f, &c);
    let token = rampart_core::Token::parse(&f.code(&secret, 0));
    let e = Factor::from_parts(Some(token), Some(&codes[0])).unwrap_err();
    assert_eq!(
        (e.kind(), e.code(), e.message()),
        (ErrorKind::FactorConflict, 400, "Give token or recoveryCode, not both")
    );
    assert!(matches!(Factor::from_parts(None, Some(" ")).unwrap(), Factor::Token(rampart_core::Token::Missing)));
    assert_eq!(f.record(&c).recovery.unwrap().remaining(), 10, "nothing changed");
}

fn reset_rules_four_eyes_and_prior_state(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let (secret, codes) = enabled_with_codes(&f, &c);
    f.service.set_kyc_passed("ops", &f.partner, &c, true).unwrap();
    verify(&f, &c, &codes[0]).unwrap();
    f.service.verify_2fa(&f.partner, &c, f.wrong_code(&secret).as_str()).unwrap();
    let reason_rule = "reason must be 1 to 500 characters without control characters";
    for reason in [String::new(), "x".repeat(501), "lost\nphone".to_owned(), "tab\there".to_owned()] {
        let e = f.service.reset_2fa("alice", &f.partner, &c, &reason, None).unwrap_err();
        assert_eq!((e.kind(), e.message()), (ErrorKind::InvalidInput, reason_rule));
    }
    assert!(f.service.reset_2fa("", &f.partner, &c, "lost phone", None).is_err(), "the operator is named");
    assert!(f.record(&c).enabled, "nothing changed");
    // Sandbox: one operator may reset; the state before comes back.
    let before = f.service.reset_2fa("alice", &f.partner, &c, &"é".repeat(500), None).unwrap();
    assert_eq!(
        before,
        ContactState {
            enabled: true,
            locked: false,
            failures: 1,
            recovery_failures: 0,
            recovery_codes_remaining: 9,
            kyc_passed: true,
            purchase_hold_until: None,
        }
    );
    assert_eq!(
        before.to_json(),
        serde_json::json!({
            "enabled": true, "locked": false, "failures": 1, "recoveryFailures": 0,
            "recoveryCodesRemaining": 9, "kycPassed": true, "purchaseHoldUntil": null
        })
    );
    let after = f.service.contact_state(&f.partner, &c).unwrap();
    assert_eq!(
        (after.enabled, after.failures, after.recovery_codes_remaining, after.kyc_passed, after.purchase_hold_until),
        (false, 0, 0, true, Some(f.now() + 86_400))
    );
    // KYC first: the contact must set up 2FA again, and is held after that.
    assert_eq!(f.service.purchase_check(&f.partner, &c).unwrap(), PurchaseCheck::TwoFactorRequired);
    let (reset_event, details) = events(&f, &c).pop().unwrap();
    assert_eq!(reset_event, "2fa.reset");
    assert_eq!(details, serde_json::json!({ "reason": "é".repeat(500), "approvedBy": null }).to_string());

    // Production: a second, different operator must approve.
    let prod = f.service.create_partner("Prod", Environment::Production).unwrap().partner_id;
    let p = contact();
    for (approver, message) in [
        (None, "approvedBy is required in production: a second operator must approve the reset"),
        (Some(" "), "approvedBy is required in production: a second operator must approve the reset"),
        (Some("alice"), "approvedBy must name another operator than the one resetting"),
    ] {
        let e = f.service.reset_2fa("alice", &prod, &p, "lost phone", approver).unwrap_err();
        assert_eq!((e.kind(), e.message()), (ErrorKind::InvalidInput, message));
    }
    assert!(f.service.audit_events(&prod, Some(&p), 0, 10).unwrap().events.is_empty(), "nothing recorded");
    f.service.reset_2fa("alice", &prod, &p, "lost phone, ticket 4411", Some("bob")).unwrap();
    let rows = f.service.audit_events(&prod, Some(&p), 0, 10).unwrap().events;
    assert_eq!((rows[0].actor.as_str(), rows[0].event.as_str()), ("operator:alice", "2fa.reset"));
    assert_eq!(rows[0].details, serde_json::json!({ "reason": "lost phone, ticket 4411", "approvedBy": "bob" }));
}

fn reset_keeps_the_last_step(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let (secret, _) = enabled_with_codes(&f, &c);
    let code = f.code(&secret, 0);
    assert!(f.service.verify_2fa(&f.partner, &c, code.as_str()).unwrap().is_accepted());
    let step = f.record(&c).last_step;
    f.service.reset_2fa("alice", &f.partner, &c, "lost phone", None).unwrap();
    assert_eq!(f.record(&c).last_step, step, "kept");
    // Re-enrolled in the same step: that step's codes never work again, the next one's do.
    let again = f.create(&c);
    let same_step = f.code(&again, 0);
    assert_eq!(kind(f.service.enable_2fa(&f.partner, &c, same_step.as_str())), ErrorKind::TokenFailed);
    assert!(f.service.enable_2fa(&f.partner, &c, f.code(&again, 1).as_str()).is_ok());
}

fn reset_of_an_unknown_contact_and_partner(b: Backend) {
    let f = Fixture::new(b);
    let never = contact();
    let state = f.service.contact_state(&f.partner, &never).unwrap();
    assert_eq!(
        state,
        ContactState {
            enabled: false,
            locked: false,
            failures: 0,
            recovery_failures: 0,
            recovery_codes_remaining: 0,
            kyc_passed: false,
            purchase_hold_until: None,
        }
    );
    // Without 2FA: the same output, still audited, and the hold still starts.
    assert_eq!(f.service.reset_2fa("alice", &f.partner, &never, "asked by support", None).unwrap(), state);
    assert_eq!(events(&f, &never).len(), 1);
    assert_eq!(f.service.contact_state(&f.partner, &never).unwrap().purchase_hold_until, Some(f.now() + 86_400));
    let ghost = PartnerId::random();
    for e in [
        f.service.contact_state(&ghost, &never).unwrap_err(),
        f.service.reset_2fa("alice", &ghost, &never, "x", None).unwrap_err(),
    ] {
        assert_eq!((e.kind(), e.message()), (ErrorKind::PartnerNotFound, "Partner not found"));
    }
}

fn the_hold_ends_at_its_time(b: Backend) {
    let f = Fixture::with_config(b, Config { purchase_hold_secs: 600, ..Config::default() });
    let c = contact();
    f.service.reset_2fa("alice", &f.partner, &c, "lost phone", None).unwrap();
    let until = f.now() + 600;
    let check = f.service.purchase_check(&f.partner, &c).unwrap();
    assert_eq!(check, PurchaseCheck::OnHold { until });
    let e = check.into_result().unwrap_err();
    let at = rampart_core::recovery::rfc3339(until);
    assert_eq!((e.kind(), e.code()), (ErrorKind::PurchaseHold, 403));
    assert_eq!(e.message(), format!("Purchases are on hold until {at} after a 2FA reset"));
    f.clock.advance(599);
    assert!(!f.service.may_purchase(&f.partner, &c).unwrap());
    f.clock.advance(1);
    assert_eq!(f.service.purchase_check(&f.partner, &c).unwrap(), PurchaseCheck::Allowed);
    assert_eq!(f.service.contact_state(&f.partner, &c).unwrap().purchase_hold_until, None, "a passed hold is null");
    // Out of range is the setting's own 400.
    let e = rampart_core::Service::builder(rampart_core::MemoryStore::new())
        .master_keys(rampart_core::KeyRing::new(1, &[1; 32]))
        .purchase_hold_secs(604_801)
        .build()
        .unwrap_err();
    assert_eq!(e.message(), "purchase_hold_secs must be 0 to 604800");
}

fn fifty_concurrent_uses_of_one_code_one_success(b: Backend) {
    let f = Fixture::new(b);
    let c = contact();
    let (_, codes) = enabled_with_codes(&f, &c);
    for (round, code) in codes.iter().take(3).enumerate() {
        let results = together(50, |i| {
            let factor = Factor::recovery_code(code);
            if i % 2 == 0 {
                f.service.verify_2fa(&f.partner, &c, factor).map(|v| v.is_accepted())
            } else {
                f.service.disable_2fa(&f.partner, &c, factor).map(|()| true)
            }
        });
        let wins = results.iter().filter(|r| matches!(r, Ok(true))).count();
        assert_eq!(wins, 1, "round {round}: {results:?}");
        if !f.record(&c).enabled {
            break;
        }
    }
}
