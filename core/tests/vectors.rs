//! The shared vectors of `tests/vectors/`: RFC 4226 / RFC 6238 values and the token grammar.

mod common;

use common::{Backend, Fixture, contact, vectors};
use rampart_core::totp::{self, Secret};
use rampart_core::{ErrorKind, Token, Verification};

fn rfc_secret(v: &serde_json::Value) -> Secret {
    Secret::from_bytes(v["secret_ascii"].as_str().unwrap().as_bytes().to_vec()).unwrap()
}

#[test]
fn rfc4226_appendix_d() {
    let v = vectors("totp/rfc4226.json");
    let s = rfc_secret(&v);
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 10);
    for c in cases {
        assert_eq!(totp::hotp(&s, c["counter"].as_u64().unwrap()), c["code"].as_str().unwrap());
    }
}

#[test]
fn rfc6238_appendix_b() {
    let v = vectors("totp/rfc6238.json");
    let s = rfc_secret(&v);
    for c in v["cases"].as_array().unwrap() {
        let (t, step, code) = (c["time"].as_u64().unwrap(), c["step"].as_u64().unwrap(), c["code"].as_str().unwrap());
        assert_eq!(&c["code8"].as_str().unwrap()[2..], code);
        assert_eq!(totp::code_at(&s, t), code, "T = {t}");
        assert_eq!(totp::verify(&s, Token::parse(code), t, 1), Some(step));
    }
}

fn classify(input: &serde_json::Value) -> Token {
    Token::from_json(Some(input))
}

#[test]
fn token_grammar() {
    let v = vectors("tokens.json");
    let cases = v["cases"].as_array().unwrap();
    let malformed = cases.iter().filter(|c| c["expect"] == "malformed").count();
    assert!(malformed >= 15, "{malformed}");
    for c in cases {
        let got = classify(&c["input"]);
        let want = match c["expect"].as_str().unwrap() {
            "missing" => Token::Missing,
            "malformed" => Token::Malformed,
            "code" => Token::parse(c["value"].as_str().unwrap()),
            other => panic!("unknown expectation {other}"),
        };
        assert_eq!(got, want, "{}", c["note"]);
        if let Token::Code(code) = got {
            assert_eq!(format!("{:06}", code.value()), c["value"].as_str().unwrap());
        }
    }
    assert_eq!(Token::from_json(None), Token::Missing, "absent field");
    assert_eq!(Token::parse(&"1".repeat(1 << 20)), Token::Malformed, "1 MiB string");
    assert_eq!(Token::parse(&format!("{}123456", " ".repeat(1 << 20))), Token::Malformed, "1 MiB padding");
}

/// Malformed tokens never reach HMAC: with the stored secret made unreadable, every
/// malformed token is still a plain 401 (and counted), while a well-formed one needs the
/// secret and fails closed with 500.
#[test]
fn malformed_tokens_never_reach_the_secret() {
    let f = Fixture::new(Backend::Memory);
    let c = contact();
    f.enabled(&c);
    f.service
        .store()
        .update_contact(&f.partner, &c, &mut |r, _| {
            r.secret = Some(vec![1; 40]);
            true
        })
        .unwrap();
    let v = vectors("tokens.json");
    let mut n = 0;
    for case in v["cases"].as_array().unwrap().iter().filter(|c| c["expect"] == "malformed") {
        let got = f.service.verify_2fa(&f.partner, &c, classify(&case["input"]));
        assert_eq!(got.unwrap(), Verification::Rejected, "{}", case["note"]);
        n += 1;
        f.service.reset_lock("tests", &f.partner, &c).unwrap();
    }
    assert!(n >= 15);
    assert_eq!(f.service.verify_2fa(&f.partner, &c, "1".repeat(1 << 20).as_str()).unwrap(), Verification::Rejected);
    assert_eq!(f.record(&c).failures, 1);
    let e = f.service.verify_2fa(&f.partner, &c, "123456").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::VerifyFailed);
}

#[test]
fn integer_and_separator_forms_are_accepted_by_the_lifecycle() {
    let f = Fixture::new(Backend::Memory);
    let c = contact();
    let s = f.enabled(&c);
    let code = f.code(&s, 0);
    let spaced = format!(" {}-{} ", &code[..3], &code[3..]);
    assert!(f.service.verify_2fa(&f.partner, &c, spaced.as_str()).unwrap().is_accepted());
    let next: u32 = f.code(&s, 1).parse().unwrap();
    assert!(f.service.verify_2fa(&f.partner, &c, next).unwrap().is_accepted());
}

#[test]
fn standard_webhooks_signatures() {
    use rampart_core::webhooks::{self, VerifyError, WebhookSecret};
    let v = vectors("webhooks/standard.json");
    for c in v["sign"].as_array().unwrap() {
        let secret = WebhookSecret::parse(c["secret"].as_str().unwrap()).unwrap();
        let signed = webhooks::sign(
            &[&secret],
            c["id"].as_str().unwrap(),
            c["timestamp"].as_u64().unwrap(),
            c["body"].as_str().unwrap().as_bytes(),
        );
        assert_eq!(signed, c["signature"].as_str().unwrap(), "{}", c["name"]);
    }
    for c in v["verify"].as_array().unwrap() {
        let secret = WebhookSecret::parse(c["secret"].as_str().unwrap()).unwrap();
        let got = webhooks::verify(
            &secret,
            c["id"].as_str().unwrap(),
            c["timestamp"].as_str().unwrap(),
            c["signature"].as_str().unwrap(),
            c["body"].as_str().unwrap().as_bytes(),
            c["now"].as_u64().unwrap(),
        );
        let want = match c["error"].as_str() {
            None => Ok(()),
            Some("too_old") => Err(VerifyError::TooOld),
            Some("too_new") => Err(VerifyError::TooNew),
            Some("no_match") => Err(VerifyError::NoMatch),
            Some("bad_timestamp") => Err(VerifyError::BadTimestamp),
            Some(other) => panic!("unknown error {other}"),
        };
        assert_eq!(got, want, "{}", c["name"]);
        assert_eq!(got.is_ok(), c["valid"].as_bool().unwrap());
    }
}
