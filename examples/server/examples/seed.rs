//! Seed a database for the load benchmark (`scripts/load-bench.sh`).
//!
//! `seed DB N OUT_DIR` creates a sandbox partner and N enabled contacts that share one TOTP
//! secret (each sealed under its own contact id, as the server would), and writes
//! `OUT_DIR/contacts.txt` (one contact id a line), `OUT_DIR/key.txt` (the partner's secret
//! key) and `OUT_DIR/secret.txt` (the shared secret, base32).
//! `seed --codes OUT_DIR` prints the shared secret's codes for now and the next step.

use std::path::{Path, PathBuf};

use rampart_core::crypto::Field;
use rampart_core::totp::{self, Secret};
use rampart_core::{ContactId, Environment, KeyRing, Service, SqliteStore, Store};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn codes(out: &Path) -> Result<()> {
    let secret = Secret::from_base32(std::fs::read_to_string(out.join("secret.txt"))?.trim())?;
    let t = now();
    println!("{} {}", totp::code_at(&secret, t), totp::code_at(&secret, t + totp::STEP_SECONDS));
    Ok(())
}

fn seed(db: &Path, n: usize, out: &Path) -> Result<()> {
    let mut key_file = db.as_os_str().to_owned();
    key_file.push(".key");
    let store = SqliteStore::open(db)?;
    let keys = KeyRing::load_or_generate(&PathBuf::from(key_file), &store)?;
    let service = Service::builder(SqliteStore::open(db)?).master_keys(keys.clone()).build()?;
    let creds = service.create_partner("Load benchmark", Environment::Sandbox)?;
    let partner = creds.partner_id;
    let secret = Secret::generate(totp::DEFAULT_SECRET_BYTES)?;
    let mut ids = String::with_capacity(n * 37);
    for _ in 0..n {
        let contact = ContactId::from_uuid(uuid::Uuid::new_v4());
        let sealed = keys.seal(&partner, &contact, Field::Secret, secret.as_bytes())?;
        let mut sealed = Some(sealed);
        store.update_contact(&partner, &contact, &mut |r, _| {
            r.enabled = true;
            r.secret = sealed.take();
            true
        })?;
        ids.push_str(&contact.to_string());
        ids.push('\n');
    }
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("contacts.txt"), ids)?;
    std::fs::write(out.join("key.txt"), creds.secret_key.expose())?;
    std::fs::write(out.join("secret.txt"), secret.to_base32())?;
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, out] if flag == "--codes" => codes(Path::new(out)),
        [db, n, out] => seed(Path::new(db), n.parse()?, Path::new(out)),
        _ => Err("usage: seed DB N OUT_DIR | seed --codes OUT_DIR".into()),
    }
}
