//! Pictures made for tests: phone-like JPEGs with EXIF, and PNGs whose chunks inflate past their bounds.

use super::*;

/// A JPEG of `width` x `height` whose top-left quarter is red and the rest blue, carrying an EXIF block with
/// `orientation` and, when `gps`, a GPS position ([`with_exif`]): the kind of photo a phone takes. For tests.
pub fn exif_jpeg(width: u32, height: u32, orientation: u16, gps: bool) -> Vec<u8> {
    let img = RgbImage::from_fn(width, height, |x, y| {
        if x < width / 2 && y < height / 2 { image::Rgb([220, 20, 20]) } else { image::Rgb([20, 20, 220]) }
    });
    let mut plain = Vec::new();
    JpegEncoder::new_with_quality(&mut plain, 95).encode_image(&img).expect("encode a test JPEG");
    with_exif(&plain, orientation, gps)
}

/// `jpeg` with an EXIF block carrying `orientation` and, when `gps`, a GPS position (51°28'38"N) inserted
/// after its start marker. For tests and benchmarks.
pub fn with_exif(jpeg: &[u8], orientation: u16, gps: bool) -> Vec<u8> {
    let plain = jpeg;
    // A big-endian TIFF block: IFD0 with Orientation and (with `gps`) a GPS IFD pointer; the GPS IFD with the
    // latitude's reference and value.
    let mut tiff: Vec<u8> = b"MM\0\x2A\0\0\0\x08".to_vec();
    let entries: u16 = if gps { 2 } else { 1 };
    tiff.extend_from_slice(&entries.to_be_bytes());
    tiff.extend_from_slice(&[0x01, 0x12, 0, 3, 0, 0, 0, 1]);
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]);
    let gps_ifd = 8 + 2 + u32::from(entries) * 12 + 4;
    if gps {
        tiff.extend_from_slice(&[0x88, 0x25, 0, 4, 0, 0, 0, 1]);
        tiff.extend_from_slice(&gps_ifd.to_be_bytes());
    }
    tiff.extend_from_slice(&[0, 0, 0, 0]);
    if gps {
        let rationals = gps_ifd + 2 + 2 * 12 + 4;
        tiff.extend_from_slice(&2u16.to_be_bytes());
        // GPSLatitudeRef "N".
        tiff.extend_from_slice(&[0x00, 0x01, 0, 2, 0, 0, 0, 2, b'N', 0, 0, 0]);
        // GPSLatitude: three rationals 51/1, 28/1, 38/1.
        tiff.extend_from_slice(&[0x00, 0x02, 0, 5, 0, 0, 0, 3]);
        tiff.extend_from_slice(&rationals.to_be_bytes());
        tiff.extend_from_slice(&[0, 0, 0, 0]);
        for v in [51u32, 28, 38] {
            tiff.extend_from_slice(&v.to_be_bytes());
            tiff.extend_from_slice(&1u32.to_be_bytes());
        }
    }
    let mut app1 = b"Exif\0\0".to_vec();
    app1.extend_from_slice(&tiff);
    let mut out = plain[..2].to_vec();
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&u16::try_from(app1.len() + 2).expect("a small EXIF block").to_be_bytes());
    out.extend_from_slice(&app1);
    out.extend_from_slice(&plain[2..]);
    out
}

/// A 64 x 64 PNG whose ICC profile is `inflated` zero bytes deflated into about `inflated / 160` bytes (a zlib
/// stream of back-references), the kind of file that costs gigabytes to a decoder that inflates its chunks:
/// with `inflated` of 1 GB, about 6 MB. For tests and benchmarks.
pub fn iccp_bomb_png(inflated: usize) -> Vec<u8> {
    let mut plain = Vec::new();
    let pixels = RgbImage::from_fn(64, 64, |x, _| image::Rgb([(x * 4) as u8, 90, 160]));
    PngEncoder::new(&mut plain).write_image(&pixels, 64, 64, image::ExtendedColorType::Rgb8).expect("a test PNG");
    let mut profile = b"bomb\0\0".to_vec();
    profile.extend_from_slice(&deflated_zeros(inflated));
    // The signature and IHDR (8 + 25 bytes), the profile, then the rest.
    let mut out = plain[..33].to_vec();
    out.extend_from_slice(&png_chunk(b"iCCP", &profile));
    out.extend_from_slice(&plain[33..]);
    out
}

/// A PNG chunk: its length, kind, data and CRC. For tests.
pub fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut crc = !0u32;
    for &byte in kind.iter().chain(data) {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    let length = u32::try_from(data.len()).expect("a chunk under 4 GB");
    [&length.to_be_bytes()[..], kind, data, &(!crc).to_be_bytes()].concat()
}

/// A zlib stream of at least `n` zero bytes (rounded up to 1 + a multiple of 258): one literal zero, then
/// back-references of 258 bytes at distance 1, in one block of fixed Huffman codes (13 bits each).
fn deflated_zeros(n: usize) -> Vec<u8> {
    let repeats = n.saturating_sub(1).div_ceil(258);
    let mut out = vec![0x78, 0x01];
    let (mut bits, mut count) = (0u64, 0u32);
    let mut put = |code: u64, len: u32, out: &mut Vec<u8>| {
        // Huffman codes go most significant bit first into a stream filled from each byte's low bit.
        for i in (0..len).rev() {
            bits |= ((code >> i) & 1) << count;
            count += 1;
        }
        while count >= 8 {
            out.push(bits as u8);
            bits >>= 8;
            count -= 8;
        }
    };
    // The last block, of fixed codes (BFINAL 1, BTYPE 01, written from the low bit).
    put(1, 1, &mut out);
    put(0b10, 2, &mut out);
    // A literal zero (code 0x30, 8 bits), then length 258 (symbol 285: 0xC5, 8 bits) at distance 1 (0, 5 bits).
    put(0x30, 8, &mut out);
    for _ in 0..repeats {
        put(0xC5, 8, &mut out);
        put(0, 5, &mut out);
    }
    // The end of the block (symbol 256: seven zero bits), then zero bits to fill the last byte.
    put(0, 7, &mut out);
    put(0, 7, &mut out);
    let total = 1 + repeats * 258;
    let adler = (((total % 65_521) as u32) << 16) | 1;
    out.extend_from_slice(&adler.to_be_bytes());
    out
}
