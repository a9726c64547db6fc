//! create's QR code (SPEC section 2): a `data:image/png;base64,...` 1-bit greyscale PNG with a
//! quiet zone of at least 4 modules, at most 1.5 KB of data URI for a default Key URI.
//!
//! Every PNG made here is decoded by an independent reader (`rqrr`) and compared with its Key
//! URI. Secrets and contact ids are random, so each run checks the sizes on fresh data.

use base64::Engine;
use rampart_core::totp;

/// SPEC section 2: at most 1.5 KB of data URI for a default Key URI.
const DEFAULT_BUDGET: usize = 1536;

/// What the PNG of a data URI holds, as read back by `png` and `rqrr`.
struct Decoded {
    text: String,
    side: usize,
    modules: usize,
    /// Light pixels between each edge and the nearest dark pixel, in modules.
    quiet_zone: usize,
}

fn decode(uri: &str) -> Decoded {
    let b64 = uri.strip_prefix("data:image/png;base64,").expect("a PNG data URI");
    let png = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().unwrap();
    // The header as written, before EXPAND widens the samples to 8 bits.
    assert_eq!(reader.info().bit_depth, png::BitDepth::One);
    assert_eq!(reader.info().color_type, png::ColorType::Grayscale);
    assert!(reader.info().palette.is_none());
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let (w, h) = (info.width as usize, info.height as usize);
    assert_eq!(w, h);
    let px = |x: usize, y: usize| buf[y * info.line_size + x];
    assert!((0..h).all(|y| (0..w).all(|x| matches!(px(x, y), 0 | 255))));

    let mut img = rqrr::PreparedImage::prepare_from_greyscale(w, h, px);
    let grids = img.detect_grids();
    assert_eq!(grids.len(), 1);
    let (meta, text) = grids[0].decode().unwrap();
    let modules = 17 + 4 * meta.version.0;

    // The dark pixels' bounding box is the symbol (its finder patterns reach three corners).
    let dark = |x: usize, y: usize| px(x, y) == 0;
    let first_row = (0..h).find(|&y| (0..w).any(|x| dark(x, y))).unwrap();
    let last_row = (0..h).rev().find(|&y| (0..w).any(|x| dark(x, y))).unwrap();
    let first_col = (0..w).find(|&x| (0..h).any(|y| dark(x, y))).unwrap();
    let last_col = (0..w).rev().find(|&x| (0..h).any(|y| dark(x, y))).unwrap();
    let symbol = last_col + 1 - first_col;
    assert_eq!(symbol, last_row + 1 - first_row);
    assert_eq!(symbol % modules, 0, "whole pixels per module");
    let scale = symbol / modules;
    let margin = first_row.min(first_col).min(h - 1 - last_row).min(w - 1 - last_col);
    Decoded { text, side: w, modules, quiet_zone: margin / scale }
}

/// A fresh Key URI's QR data URI, checked to decode back to that URI; returns its length.
fn checked_len(issuer: &str) -> (usize, Decoded) {
    let account = uuid::Uuid::new_v4().hyphenated().to_string();
    let enrolment = totp::new_secret(issuer, &account).unwrap();
    let decoded = decode(&enrolment.qr_code);
    assert_eq!(decoded.text, enrolment.uri);
    assert!(decoded.quiet_zone >= 4, "quiet zone of {} modules", decoded.quiet_zone);
    (enrolment.qr_code.len(), decoded)
}

/// The largest data URI over `n` fresh Key URIs for `issuer`.
fn largest(issuer: &str, n: usize) -> usize {
    (0..n).map(|_| checked_len(issuer).0).max().unwrap()
}

#[test]
fn default_key_uri_fits_the_budget() {
    // Issuer Rampart2FA, a contact UUID, a 32-character secret: 154 characters, version 9-M,
    // drawn at 4 pixels per module: 244 x 244 pixels. Measured 1002 to 1054 bytes over 300.
    let mut sizes = Vec::new();
    for _ in 0..24 {
        let (len, decoded) = checked_len("Rampart2FA");
        assert_eq!(decoded.modules, 53);
        assert_eq!(decoded.side, (53 + 8) * 4);
        assert_eq!(decoded.quiet_zone, 4);
        sizes.push(len);
    }
    let max = *sizes.iter().max().unwrap();
    assert!(max <= DEFAULT_BUDGET, "{max} bytes for a default Key URI");
    // Room left, so that a change that eats it shows here first.
    assert!(max <= 1200, "{max} bytes for a default Key URI (measured up to 1054)");
}

#[test]
fn long_issuer_of_unreserved_characters_fits_the_budget_too() {
    // 64 letters (the longest issuer allowed): the issuer is in the Key URI twice, 262
    // characters, version 12-M, 292 x 292 pixels. Measured 1406 to 1462 bytes over 300.
    let issuer = "LongIssuer-0123456789.abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJKLMN~";
    assert_eq!(issuer.chars().count(), 64);
    let max = largest(issuer, 8);
    assert!(max <= DEFAULT_BUDGET, "{max} bytes for a 64-character issuer");
}

#[test]
fn long_issuers_that_need_escaping_are_bounded() {
    // Each escaped byte is 3 URI characters, twice over; these are past the 1.5 KB budget
    // (which SPEC sets for the default Key URI only). Measured maxima over 300 Key URIs each:
    // 1806 bytes for spaces (346 characters, version 14), 3778 for `é` (902, version 24),
    // 6330 for 4-byte UTF-8 (1670 characters, version 34, the worst a 64-character issuer
    // can make).
    let spaces = "a b".repeat(21) + "c";
    let accents = "é".repeat(64);
    let four_byte = "\u{1F510}".repeat(64);
    for (issuer, samples, bound) in
        [(spaces.as_str(), 3, 1920), (accents.as_str(), 2, 4000), (four_byte.as_str(), 1, 6656)]
    {
        assert_eq!(issuer.chars().count(), 64);
        let max = largest(issuer, samples);
        assert!(max <= bound, "{max} bytes, bound {bound}");
    }
}

/// The size figures quoted above and in docs/BENCHMARKS.md:
/// `cargo test --release -p rampart-core --test qr -- --ignored --nocapture`.
#[test]
#[ignore = "prints measurements; slow in a debug build"]
fn print_data_uri_sizes() {
    let spaces = "a b".repeat(21) + "c";
    let accents = "é".repeat(64);
    let four_byte = "\u{1F510}".repeat(64);
    let letters = "LongIssuer-0123456789.abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJKLMN~";
    for (name, issuer) in [
        ("Rampart2FA", "Rampart2FA"),
        ("64 unreserved ASCII", letters),
        ("64 with spaces", spaces.as_str()),
        ("64 x e-acute", accents.as_str()),
        ("64 x 4-byte UTF-8", four_byte.as_str()),
    ] {
        let runs: Vec<(usize, Decoded)> = (0..300).map(|_| checked_len(issuer)).collect();
        let min = runs.iter().map(|r| r.0).min().unwrap();
        let max = runs.iter().map(|r| r.0).max().unwrap();
        let d = &runs[0].1;
        println!(
            "{name}: {} modules, {} x {} px, data URI {min} to {max} bytes over {} Key URIs",
            d.modules,
            d.side,
            d.side,
            runs.len()
        );
    }
}

/// The README shows create's QR code for a fixed example Key URI: this test makes it. The
/// committed `docs/images/create-qr.png` must be byte-equal to what the code makes now (a drift
/// check, as for the C header); `RAMPART_UPDATE_IMAGES=1 cargo test -p rampart-core --test qr`
/// rewrites it after a deliberate change.
#[test]
fn readme_image_is_what_create_makes() {
    let uri = totp::key_uri("Rampart2FA", "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11", "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP");
    let data_uri = totp::qr_png_data_uri(&uri).unwrap();
    assert_eq!(decode(&data_uri).text, uri);
    let png = base64::engine::general_purpose::STANDARD
        .decode(data_uri.strip_prefix("data:image/png;base64,").unwrap())
        .unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/images/create-qr.png");
    if std::env::var_os("RAMPART_UPDATE_IMAGES").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &png).unwrap();
    }
    let committed = std::fs::read(&path).expect("docs/images/create-qr.png (RAMPART_UPDATE_IMAGES=1 makes it)");
    assert!(committed == png, "docs/images/create-qr.png is stale: run with RAMPART_UPDATE_IMAGES=1 and commit it");
    assert!(data_uri.len() <= DEFAULT_BUDGET, "{}", data_uri.len());
}
