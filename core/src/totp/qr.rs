//! QR code as a PNG data URI.
//!
//! The image is 1-bit greyscale (a QR code has two colours), so the PNG is small and fast to
//! compress: a 20-byte secret's Key URI gives a version 6 or 7 code, about 2 KB of data URI.

use base64::Engine;
use qrcode::{Color, EcLevel, QrCode};

use crate::error::{Error, ErrorKind, Result};

/// Pixels per QR module.
const SCALE: usize = 6;
/// Light modules around the code (ISO/IEC 18004 asks for 4).
const QUIET_ZONE: usize = 4;

/// Encode `text` as a QR code (error correction M) and return `data:image/png;base64,...`.
pub fn qr_png_data_uri(text: &str) -> Result<String> {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)
        .map_err(|e| Error::invalid_input("qrCode", "data is too long for a QR code").with_cause(e.to_string()))?;
    let png = render_png(&code).map_err(|e| Error::new(ErrorKind::Internal).with_cause(e))?;
    let mut out = String::with_capacity(22 + png.len().div_ceil(3) * 4);
    out.push_str("data:image/png;base64,");
    base64::engine::general_purpose::STANDARD.encode_string(&png, &mut out);
    Ok(out)
}

fn render_png(code: &QrCode) -> std::result::Result<Vec<u8>, png::EncodingError> {
    let modules = code.width();
    let colors = code.to_colors();
    let side = (modules + 2 * QUIET_ZONE) * SCALE;
    let row_bytes = side.div_ceil(8);
    // In 1-bit greyscale a set bit is white. Start white; clear the bits of dark modules.
    let mut pixels = vec![0xffu8; row_bytes * side];
    for (y, row) in colors.chunks(modules).enumerate() {
        let mut line = vec![0xffu8; row_bytes];
        for (x, color) in row.iter().enumerate() {
            if *color == Color::Dark {
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
    let mut out = Vec::with_capacity(2048);
    let side = u32::try_from(side).unwrap_or(u32::MAX);
    let mut encoder = png::Encoder::new(&mut out, side, side);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::One);
    encoder.set_compression(png::Compression::Fast);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_decodes_to_the_code() {
        let text = "otpauth://totp/Rampart2FA:x?secret=JBSWY3DPEHPK3PXP&issuer=Rampart2FA";
        let uri = qr_png_data_uri(text).unwrap();
        let b64 = uri.strip_prefix("data:image/png;base64,").unwrap();
        let png = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M).unwrap();
        let side = (code.width() + 2 * QUIET_ZONE) * SCALE;
        assert_eq!(info.width as usize, side);
        assert_eq!(info.bit_depth, png::BitDepth::One);
        // Sample the centre pixel of every module and compare with the code.
        let colors = code.to_colors();
        for y in 0..code.width() {
            for x in 0..code.width() {
                let (px, py) = ((x + QUIET_ZONE) * SCALE + SCALE / 2, (y + QUIET_ZONE) * SCALE + SCALE / 2);
                let bit = buf[py * info.line_size + px / 8] & (0x80 >> (px % 8));
                assert_eq!(bit == 0, colors[y * code.width() + x] == Color::Dark, "module {x},{y}");
            }
        }
    }
}
