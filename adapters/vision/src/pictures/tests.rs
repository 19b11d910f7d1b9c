use super::*;

fn red(p: image::Rgb<u8>) -> bool {
    p.0[0] > 150 && p.0[2] < 100
}

fn decoded(bytes: &[u8]) -> RgbImage {
    image::load_from_memory(bytes).unwrap().to_rgb8()
}

#[test]
fn the_test_photo_carries_its_gps_and_orientation() {
    let jpeg = exif_jpeg(64, 32, 6, true);
    let mut decoder = image::ImageReader::with_format(Cursor::new(&jpeg), ImageFormat::Jpeg).into_decoder().unwrap();
    let exif = decoder.exif_metadata().unwrap().unwrap();
    assert_eq!(Orientation::from_exif_chunk(&exif), Some(Orientation::Rotate90));
    assert!(exif.windows(2).any(|w| w == [0x88, 0x25]), "a GPS IFD pointer");
}

#[test]
fn an_upright_jpeg_loses_its_exif_and_keeps_its_image_data() {
    let jpeg = exif_jpeg(64, 32, 1, true);
    let kept = PictureWork::new().keep(MediaType::Jpeg, jpeg.clone()).unwrap();
    assert_eq!(kept.size, PixelSize { width: 64, height: 32 });
    assert!(!kept.bytes.windows(4).any(|w| w == b"Exif"), "no EXIF left");
    // Nothing but the EXIF segment went: the rest is the same bytes.
    let app1_len = usize::from(u16::from_be_bytes([jpeg[4], jpeg[5]])) + 2;
    assert_eq!(kept.bytes.len(), jpeg.len() - app1_len);
    assert_eq!(&kept.bytes[2..], &jpeg[2 + app1_len..]);
}

#[test]
fn a_turned_jpeg_is_turned_in_its_pixels_and_loses_its_exif() {
    // Orientation 6: the camera was turned; shown, the picture is rotated 90 degrees clockwise, so the
    // red top-left quarter of the stored pixels shows at the top right.
    let kept = PictureWork::new().keep(MediaType::Jpeg, exif_jpeg(64, 32, 6, true)).unwrap();
    assert_eq!(kept.size, PixelSize { width: 32, height: 64 });
    assert!(!kept.bytes.windows(4).any(|w| w == b"Exif"), "no EXIF left");
    let shown = decoded(&kept.bytes);
    assert_eq!(shown.dimensions(), (32, 64));
    assert!(red(*shown.get_pixel(28, 4)), "top right is red");
    assert!(!red(*shown.get_pixel(4, 4)), "top left is not");
    let mut decoder =
        image::ImageReader::with_format(Cursor::new(&kept.bytes), ImageFormat::Jpeg).into_decoder().unwrap();
    assert_eq!(decoder.orientation().unwrap(), Orientation::NoTransforms);
}

#[test]
fn a_png_without_metadata_is_kept_as_it_is() {
    let mut png = Vec::new();
    DynamicImage::ImageRgb8(RgbImage::new(5, 4)).write_to(&mut Cursor::new(&mut png), ImageFormat::Png).unwrap();
    let kept = PictureWork::new().keep(MediaType::Png, png.clone()).unwrap();
    assert_eq!(kept, KeptPicture { bytes: png, size: PixelSize { width: 5, height: 4 } });
}

#[test]
fn broken_pictures_are_refused() {
    let mut cut = exif_jpeg(64, 32, 1, false);
    cut.truncate(cut.len() / 3);
    for (media_type, bytes) in [
        (MediaType::Jpeg, cut),
        (MediaType::Png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec()),
        (MediaType::Webp, b"RIFF\x24\0\0\0WEBPVP8 \0\0".to_vec()),
    ] {
        let err = PictureWork::new().keep(media_type, bytes).unwrap_err();
        assert!(matches!(err, PictureError::Broken(_)), "{media_type}: {err:?}");
    }
}

#[test]
fn a_crop_is_just_its_region_without_metadata() {
    let photo = exif_jpeg(200, 100, 1, true);
    let region = |x, y, width, height| Region { x, y, width, height, area_px: 1, spread: None };
    let crop = PictureWork::new().crops(MediaType::Jpeg, &photo, &[region(10, 5, 60, 30)]).unwrap().remove(0);
    assert!(!crop.windows(4).any(|w| w == b"Exif"), "no EXIF in a crop");
    let pixels = decoded(&crop);
    assert_eq!(pixels.dimensions(), (60, 30));
    assert!(red(*pixels.get_pixel(30, 15)), "the crop lies in the red quarter");
    // Cut at the picture's edge; outside it is refused.
    let edge =
        decoded(&PictureWork::new().crops(MediaType::Jpeg, &photo, &[region(150, 80, 100, 100)]).unwrap().remove(0));
    assert_eq!(edge.dimensions(), (50, 20));
    let err = PictureWork::new().crops(MediaType::Jpeg, &photo, &[region(200, 0, 5, 5)]).unwrap_err();
    assert!(matches!(err, PictureError::Broken(_)), "{err:?}");
    // Several regions from one decoding: each the same as cropped alone, in the order asked.
    let one_by_one: Vec<Vec<u8>> = [region(150, 80, 100, 100), region(10, 5, 60, 30)]
        .iter()
        .map(|r| PictureWork::new().crops(MediaType::Jpeg, &photo, &[*r]).unwrap().remove(0))
        .collect();
    let at_once =
        PictureWork::new().crops(MediaType::Jpeg, &photo, &[region(150, 80, 100, 100), region(10, 5, 60, 30)]);
    assert_eq!(at_once.unwrap(), one_by_one);
    assert_eq!(one_by_one[1], crop);
    assert!(PictureWork::new().crops(MediaType::Jpeg, &photo, &[]).unwrap().is_empty());
}

#[test]
fn a_jpeg_cut_anywhere_in_its_scan_is_refused() {
    let whole = exif_jpeg(200, 100, 1, true);
    for keep in [whole.len() - 2, whole.len() * 2 / 3, whole.len() / 3] {
        let err = PictureWork::new().keep(MediaType::Jpeg, whole[..keep].to_vec()).unwrap_err();
        assert!(matches!(err, PictureError::Broken(_)), "cut at {keep}: {err:?}");
    }
    // What a camera appends after the end (a motion photo, the further pictures of an MPF file, each with
    // its own EXIF) is no reason to refuse, and is not kept.
    let mut trailer = whole.clone();
    trailer.extend_from_slice(&exif_jpeg(8, 8, 1, true));
    let kept = PictureWork::new().keep(MediaType::Jpeg, trailer).unwrap();
    assert!(!kept.bytes.windows(4).any(|w| w == b"Exif"), "no EXIF left, the trailer's neither");
    assert!(kept.bytes.ends_with(&[0xFF, 0xD9]));
}

#[test]
fn thumbnails_are_small_jpegs_shown_upright() {
    let thumb = PictureWork::new().thumbnail(MediaType::Jpeg, &exif_jpeg(1000, 500, 6, false)).unwrap();
    assert!(thumb.starts_with(&[0xFF, 0xD8, 0xFF]));
    let shown = decoded(&thumb);
    assert_eq!(shown.dimensions(), (160, 320));
    assert!(red(*shown.get_pixel(150, 10)), "top right is red");
    let again = PictureWork::new().thumbnail(MediaType::Jpeg, &exif_jpeg(1000, 500, 6, false)).unwrap();
    assert_eq!(thumb, again, "the same picture makes the same thumbnail");
}

/// The kinds of a PNG's chunks, in order.
fn chunks(png: &[u8]) -> Vec<String> {
    let mut kinds = Vec::new();
    let mut at = 8;
    while at + 8 <= png.len() {
        let length = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        kinds.push(String::from_utf8_lossy(&png[at + 4..at + 8]).into_owned());
        at += 12 + length;
    }
    kinds
}

/// A PNG of `width` x `height` 16-bit RGB whose top-left quarter is red and the rest blue.
fn png16(width: u32, height: u32) -> Vec<u8> {
    let pixels = image::ImageBuffer::<image::Rgb<u16>, _>::from_fn(width, height, |x, y| {
        if x < width / 2 && y < height / 2 {
            image::Rgb([60_000, 5_000, 5_000])
        } else {
            image::Rgb([5_000, 5_000, 60_000])
        }
    });
    let mut png = Vec::new();
    DynamicImage::ImageRgb16(pixels).write_to(&mut Cursor::new(&mut png), ImageFormat::Png).unwrap();
    png
}

#[test]
fn the_test_bomb_inflates_to_what_it_says() {
    let bomb = iccp_bomb_png(1 << 20);
    let mut decoder = png::Decoder::new_with_limits(Cursor::new(&bomb), png::Limits { bytes: 4 << 20 });
    decoder.set_ignore_text_chunk(true);
    let reader = decoder.read_info().unwrap();
    let profile = reader.info().icc_profile.as_deref().expect("the profile inflates within 4 MB");
    assert_eq!(profile.len(), 1 + ((1usize << 20) - 1).div_ceil(258) * 258);
    assert!(profile.iter().all(|&b| b == 0));
}

#[test]
fn an_icc_profile_that_inflates_past_the_bound_is_dropped_unread() {
    // 256 MB of profile in about 1.6 MB: read within the bound, the inflater stops at PNG_HEADER_BYTES.
    let bomb = iccp_bomb_png(256 << 20);
    assert!(bomb.len() < 2 << 20, "{} bytes", bomb.len());
    let header = png_header(&bomb).unwrap();
    assert!(!header.icc, "the profile is not read past the bound");
    let kept = PictureWork::new().keep(MediaType::Png, bomb.clone()).unwrap();
    assert_eq!(kept.size, PixelSize { width: 64, height: 64 });
    assert_eq!(chunks(&kept.bytes), ["IHDR", "IDAT", "IEND"], "the profile is gone, the pixels stay");
    assert_eq!(decoded(&kept.bytes), decoded(&bomb));
    let thumb = PictureWork::new().thumbnail(MediaType::Png, &bomb).unwrap();
    assert_eq!(decoded(&thumb).dimensions(), (64, 64));
    let region = Region { x: 8, y: 8, width: 16, height: 16, area_px: 256, spread: None };
    assert_eq!(
        decoded(&PictureWork::new().crops(MediaType::Png, &bomb, &[region]).unwrap().remove(0)).dimensions(),
        (16, 16)
    );
}

#[test]
fn a_png_keeps_a_small_icc_profile_and_loses_its_exif_and_text_byte_for_byte() {
    let mut plain = Vec::new();
    let mut encoder = PngEncoder::new(&mut plain);
    encoder.set_icc_profile(vec![7; 3000]).unwrap();
    encoder.write_image(&RgbImage::new(20, 10), 20, 10, image::ExtendedColorType::Rgb8).unwrap();
    let iend = plain.len() - 12;
    let tagged = [
        &plain[..iend],
        &png_chunk(b"eXIf", &with_exif(&[0xFF, 0xD8], 1, true)[12..]),
        &png_chunk(b"tEXt", b"Comment\0taken at home"),
        &png_chunk(b"tIME", &[7, 234, 12, 3, 10, 0, 0]),
        &plain[iend..],
    ]
    .concat();
    assert!(png_header(&tagged).unwrap().icc);
    let kept = PictureWork::new().keep(MediaType::Png, tagged).unwrap();
    assert_eq!(kept.bytes, plain, "only the EXIF, text and time went");
    assert_eq!(kept.size, PixelSize { width: 20, height: 10 });
}

#[test]
fn a_turned_png_is_turned_in_its_pixels_and_loses_its_exif() {
    // The EXIF block of a JPEG's APP1 segment, after its marker, length and "Exif\0\0", right after IHDR.
    let plain = png16(40, 20);
    let turned = [&plain[..33], &png_chunk(b"eXIf", &with_exif(&[0xFF, 0xD8], 6, true)[12..]), &plain[33..]].concat();
    let kept = PictureWork::new().keep(MediaType::Png, turned).unwrap();
    assert_eq!(kept.size, PixelSize { width: 20, height: 40 });
    assert!(!chunks(&kept.bytes).contains(&"eXIf".to_owned()));
    let shown = decoded(&kept.bytes);
    assert!(red(*shown.get_pixel(18, 2)), "top right is red");
    assert!(!red(*shown.get_pixel(2, 2)), "top left is not");
}

#[test]
fn a_16_bit_png_is_thumbnailed_and_cropped_row_by_row() {
    let png = png16(1400, 700);
    let thumb = decoded(&PictureWork::new().thumbnail(MediaType::Png, &png).unwrap());
    assert_eq!(thumb.dimensions(), (320, 160));
    assert!(red(*thumb.get_pixel(40, 40)), "top left is red");
    assert!(!red(*thumb.get_pixel(280, 120)), "bottom right is not");
    let region = Region { x: 600, y: 300, width: 200, height: 100, area_px: 1, spread: None };
    let crop = decoded(&PictureWork::new().crops(MediaType::Png, &png, &[region]).unwrap().remove(0));
    assert_eq!(crop.dimensions(), (200, 100));
    assert!(red(*crop.get_pixel(10, 10)) && !red(*crop.get_pixel(190, 90)), "the crop straddles the quarter");
}

#[test]
fn an_interlaced_png_over_the_decoded_bytes_is_refused_before_its_pixels() {
    // 7000 x 7000 16-bit RGBA, interlaced: 392 MB whole, more than MAX_DECODED_BYTES. Its pixel data is
    // never reached, so a few bytes of it do.
    let header = [&7000u32.to_be_bytes()[..], &7000u32.to_be_bytes(), &[16, 6, 0, 0, 1]].concat();
    let png = [
        &b"\x89PNG\r\n\x1a\n"[..],
        &png_chunk(b"IHDR", &header),
        &png_chunk(b"IDAT", &[0x78, 0x01, 0x03, 0x00]),
        &png_chunk(b"IEND", b""),
    ]
    .concat();
    let work = PictureWork::new();
    let region = Region { x: 0, y: 0, width: 10, height: 10, area_px: 100, spread: None };
    for err in [
        work.keep(MediaType::Png, png.clone()).unwrap_err(),
        work.thumbnail(MediaType::Png, &png).unwrap_err(),
        work.crops(MediaType::Png, &png, &[region]).unwrap_err(),
    ] {
        let PictureError::TooManyPixels { width, height, max_pixels } = err else { panic!("{err:?}") };
        // At 8 bytes a pixel, the bound's worth of pixels.
        assert_eq!((width, height, max_pixels), (7000, 7000, MAX_DECODED_BYTES / 8));
    }
}

#[test]
fn stripping_keeps_every_other_segment() {
    let jpeg = [
        &[0xFF, 0xD8][..],
        &[0xFF, 0xE0, 0, 4, 1, 2],
        &[0xFF, 0xE1, 0, 4, 3, 4],
        &[0xFF, 0xED, 0, 3, 5],
        &[0xFF, 0xE2, 0, 3, 6],
        &[0xFF, 0xE2, 0, 6, b'M', b'P', b'F', 0],
        &[0xFF, 0xDA, 0, 2, 0xAB, 0xFF, 0xE1, 0xFF, 0xD9, 0xFF, 0xD8, 0xFF, 0xE1],
    ]
    .concat();
    let expected = [
        &[0xFF, 0xD8][..],
        &[0xFF, 0xE0, 0, 4, 1, 2],
        &[0xFF, 0xE2, 0, 3, 6],
        &[0xFF, 0xDA, 0, 2, 0xAB, 0xFF, 0xE1, 0xFF, 0xD9],
    ]
    .concat();
    assert_eq!(strip_jpeg_metadata(&jpeg), Some(expected));
    assert_eq!(strip_jpeg_metadata(&[0xFF, 0xD8, 0xFF, 0xE1, 0, 40]), None, "a segment past the end");
}
