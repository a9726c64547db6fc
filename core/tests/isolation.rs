//! Tenant isolation: two partners with the same contact ids; random operations on either
//! never change the other's state.

mod common;

use std::collections::HashMap;

use common::{Backend, Fixture, contact};
use rampart_core::totp::Secret;
use rampart_core::{ContactId, Environment, PartnerId, Token};

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Default, Clone)]
struct Model {
    enabled: bool,
    pending: Option<(Secret, u64)>,
    secret: Option<Secret>,
}

fn run(backend: Backend, seed: u64) {
    let f = Fixture::new(backend);
    let b = f.service.create_partner("Beta", Environment::Sandbox).unwrap().partner_id;
    let partners = [f.partner, b];
    let contacts: Vec<ContactId> = (0..6).map(|_| contact()).collect();
    let mut model: HashMap<(PartnerId, ContactId), Model> = HashMap::new();
    let mut rng = Rng(seed);
    for step in 0..600 {
        let p = partners[rng.below(2)];
        let c = contacts[rng.below(contacts.len())];
        let m = model.entry((p, c)).or_default();
        // Codes of the *other* partner's secret for this contact are tried too: they must fail.
        let other = partners.iter().find(|x| **x != p).copied().unwrap();
        match rng.below(4) {
            0 => {
                let r = f.service.create_2fa(&p, &c, None);
                if m.enabled {
                    assert!(r.is_err());
                } else {
                    m.pending = Some((Secret::from_base32(&r.unwrap().manual).unwrap(), f.now()));
                }
            }
            1 => {
                let live = m.pending.as_ref().filter(|(_, at)| f.now() < at + 600);
                let code = live.map(|(s, _)| f.code(s, 0));
                let r = f.service.enable_2fa(&p, &c, Token::from(code.as_deref()));
                if !m.enabled && code.is_some() {
                    r.unwrap();
                    m.enabled = true;
                    m.secret = m.pending.take().map(|(s, _)| s);
                } else {
                    assert!(r.is_err());
                }
            }
            2 => {
                if let Some(s) = m.secret.clone() {
                    let r = f.service.disable_2fa(&p, &c, f.code(&s, 0).as_str());
                    r.unwrap();
                    *m = Model::default();
                }
            }
            _ => {
                let them = model.get(&(other, c)).cloned().unwrap_or_default();
                if let (Some(theirs), true) = (them.secret.as_ref(), model.get(&(p, c)).is_some_and(|m| m.enabled)) {
                    let v = f.service.verify_2fa(&p, &c, f.code(theirs, 0).as_str()).unwrap();
                    assert!(!v.is_accepted(), "another partner's secret verified");
                    f.service.reset_lock("tests", &p, &c).unwrap();
                }
            }
        }
        for q in partners {
            for d in &contacts {
                let want = model.get(&(q, *d)).is_some_and(|m| m.enabled);
                assert_eq!(f.service.status_2fa(&q, d).unwrap(), want, "step {step}");
            }
        }
        f.clock.advance(30);
    }
}

#[test]
fn random_operations_never_cross_partners_memory() {
    run(Backend::Memory, 0x9E37_79B9_7F4A_7C15);
}

#[test]
fn random_operations_never_cross_partners_sqlite() {
    run(Backend::Sqlite, 0xD1B5_4A32_D192_ED03);
}
