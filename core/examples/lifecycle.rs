//! The 2FA lifecycle end to end on a SQLite file:
//! `cargo run -p rampart-core --example lifecycle`.
//!
//! The user's authenticator app is played by `totp::code_at` on the `manual` key.

use rampart_core::{ContactId, Environment, KeyRing, Service, SqliteStore, totp};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("rampart-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("rampart.db");

    let store = SqliteStore::open(&db)?;
    let keys = KeyRing::load_or_generate(&db.with_extension("db.key"), &store)?;
    let service = Service::builder(store).master_keys(keys).build()?;
    let partner = service.create_partner("Acme", Environment::Sandbox)?.partner_id;
    let contact = ContactId::parse("6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11")?;

    let setup = service.create_2fa(&partner, &contact, None)?;
    println!("create: QR data URI of {} bytes, manual key of {} characters", setup.qr_code.len(), setup.manual.len());

    let app = totp::Secret::from_base32(&setup.manual)?;
    let now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    service.enable_2fa(&partner, &contact, totp::code_at(&app, now()).as_str())?;
    println!("enable: {}", rampart_core::lifecycle::MSG_ENABLED);
    println!("status: {}", rampart_core::lifecycle::status_message(service.status_2fa(&partner, &contact)?));

    // The enabling code is used up; the next step's code (the window allows one step ahead) works.
    let next = totp::code_at(&app, now() + 30);
    println!(
        "verify same code again: {:?}",
        service.verify_2fa(&partner, &contact, totp::code_at(&app, now()).as_str())?
    );
    service.disable_2fa(&partner, &contact, next.as_str())?;
    println!("disable: {}", rampart_core::lifecycle::MSG_DISABLED);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
