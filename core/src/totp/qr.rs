//! QR code as a PNG data URI.
//!
//! The module matrix comes from `fast_qr`: the `qrcode` crate took 1.1 to 1.8 ms for a Key URI
//! (almost all of it in mask selection), more than the whole create budget, where `fast_qr`
//! takes about 0.17 to 0.25 ms (see docs/BENCHMARKS.md).
//!
//! The PNG is 1-bit greyscale (a QR code has two colours), [`SCALE`] = 4 pixels per module,
//! rows unfiltered, deflated at zlib level 6 (`png::Compression::Default`) by flate2's
//! `zlib-rs` backend. At 4 pixels a module is half a byte, so a row holds only four byte
//! values and each module row repeats four times: deflate codes a row in about 2 bits per
//! byte and the three repeats as one back-reference. A default Key URI (version 9) gives a
//! 244 x 244 image and about 1.0 KB of data URI (SPEC: at most 1.5 KB) in about 75 us. The
//! filters (Sub, Up, Paeth) all made it larger, `png::Compression::Fast` (fdeflate, zero runs
//! only) fits 1.5 KB only at 1 pixel per module, and flate2's default backend, miniz_oxide,
//! took about 0.29 ms for the same PNG, much of it clearing its tables, which create cannot
//! afford (docs/BENCHMARKS.md, "QR encoding"; docs/DESIGN.md for the scale).

use base64::Engine;
use fast_qr::{ECL, QRBuilder, QRCode};

use crate::error::{Error, ErrorKind, Result};

/// Pixels per QR module: an `<img>` without CSS shows a default Key URI at 244 x 244 CSS
/// pixels (4 per module; 8 device pixels on a 2x screen), a size phone cameras read from a
/// screen (docs/DESIGN.md).
pub const SCALE: usize = 4;
/// Light modules around the code (ISO/IEC 18004 asks for 4).
pub const QUIET_ZONE: usize = 4;

/// Encode `text` as a QR code (error correction M) and return `data:image/png;base64,...`.
pub fn qr_png_data_uri(text: &str) -> Result<String> {
    let code = QRBuilder::new(text.as_bytes())
        .ecl(ECL::M)
        .build()
        .map_err(|e| Error::invalid_input("qrCode", "data is too long for a QR code").with_cause(format!("{e:?}")))?;
    let png = render_png(&code).map_err(|e| Error::new(ErrorKind::Internal).with_cause(e))?;
    let mut out = String::with_capacity(22 + png.len().div_ceil(3) * 4);
    out.push_str("data:image/png;base64,");
    base64::engine::general_purpose::STANDARD.encode_string(&png, &mut out);
    Ok(out)
}

fn render_png(code: &QRCode) -> std::result::Result<Vec<u8>, png::EncodingError> {
    let modules = code.size;
    let side = (modules + 2 * QUIET_ZONE) * SCALE;
    let row_bytes = side.div_ceil(8);
    // In 1-bit greyscale a set bit is white. Start white; clear the bits of dark modules.
    let mut pixels = vec![0xffu8; row_bytes * side];
    let mut line = vec![0xffu8; row_bytes];
    for (y, row) in code.data[..modules * modules].chunks(modules).enumerate() {
        line.fill(0xff);
        for (x, module) in row.iter().enumerate() {
            if module.value() {
                let x0 = (x + QUIET_ZONE) * SCALE;
                for px in x0..x0 + SCALE {
                    line[px / 8] &= !(0x80 >> (px % 8));
                }
            }
        }
        let y0 = (y + QUIET_ZONE) * SCALE;
        for py in y0..y0 + SCALE {
            pixels[py * row_bytes..(py + 1) * row_bytes].copy_from_slice(&line);
        }
    }
    let mut out = Vec::with_capacity(1024);
    let side = u32::try_from(side).unwrap_or(u32::MAX);
    let mut encoder = png::Encoder::new(&mut out, side, side);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::One);
    // No filter: a repeated row is one back-reference as it is; Up would turn the repeats into
    // zeros but the first row of each module row into differences with more byte values.
    encoder.set_compression(png::Compression::Default);
    encoder.set_filter(png::FilterType::NoFilter);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::NonAdaptive);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decode the data URI's PNG with an independent QR reader.
    fn decode(uri: &str) -> (u32, String) {
        let b64 = uri.strip_prefix("data:image/png;base64,").unwrap();
        let png = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
        let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
        decoder.set_transformations(png::Transformations::EXPAND);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        let (w, h) = (info.width as usize, info.height as usize);
        // EXPAND turns 1-bit grey into 8-bit grey (0 or 255).
        let mut img = rqrr::PreparedImage::prepare_from_greyscale(w, h, |x, y| buf[y * info.line_size + x]);
        let grids = img.detect_grids();
        assert_eq!(grids.len(), 1);
        (info.width, grids[0].decode().unwrap().1)
    }

    #[test]
    fn png_decodes_back_to_the_text() {
        for text in [
            "otpauth://totp/Rampart2FA:6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Rampart2FA&algorithm=SHA1&digits=6&period=30",
            "otpauth://totp/Z%C3%BCrich:%E3%83%A6?secret=JBSWY3DPEHPK3PXP&issuer=Z%C3%BCrich",
            "short",
        ] {
            let (width, decoded) = decode(&qr_png_data_uri(text).unwrap());
            assert_eq!(decoded, text);
            assert_eq!(width as usize % SCALE, 0);
        }
    }

    #[test]
    fn too_long_is_a_clear_error() {
        let e = qr_png_data_uri(&"x".repeat(4000)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert_eq!(e.message(), "qrCode data is too long for a QR code");
    }
}
