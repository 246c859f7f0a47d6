//! Unit tests of reading images: sizes, thumbnails, and the bombs hostile
//! tests found (PNG metadata, a GIF frame larger than its screen); WebP's
//! are in `webp_tests.rs`.

use super::*;

pub(super) fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_pixel(width, height, image::Rgb([200, 10, 10]));
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Png).expect("encode");
    out.into_inner()
}

#[test]
fn an_image_is_measured_and_its_thumbnail_keeps_the_aspect() {
    let _one = one_at_a_time();
    let inspected = inspect(&png(640, 320), ImageFormat::Png, 1_000_000, 320).expect("png");
    assert_eq!((inspected.width, inspected.height), (640, 320));
    let thumb = image::load_from_memory_with_format(&inspected.thumbnail, ImageFormat::Jpeg).expect("jpeg");
    assert_eq!((thumb.width(), thumb.height()), (320, 160));
}

#[test]
fn too_many_pixels_and_undecodable_bodies_are_refused() {
    let _one = one_at_a_time();
    assert_eq!(
        inspect(&png(100, 100), ImageFormat::Png, 9_999, 320).unwrap_err(),
        ImageRefusal::TooManyPixels {
            pixels: 10_000,
            max: 9_999
        }
    );
    assert!(matches!(
        inspect(b"not a png at all", ImageFormat::Png, 1_000_000, 320).unwrap_err(),
        ImageRefusal::Undecodable(_)
    ));
    let mut cut = png(64, 64);
    cut.truncate(cut.len() / 2);
    assert!(matches!(
        inspect(&cut, ImageFormat::Png, 1_000_000, 320).unwrap_err(),
        ImageRefusal::Undecodable(_)
    ));
    // A PNG declared as JPEG.
    assert!(inspect(&png(8, 8), ImageFormat::Jpeg, 1_000_000, 320).is_err());
}

/// A 1×1 PNG whose `iCCP` profile inflates to `inflated` bytes of zeros.
fn png_with_iccp_bomb(inflated: usize) -> Vec<u8> {
    use std::io::Write;
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&u32::try_from(data.len()).expect("chunk").to_be_bytes());
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc.sum().to_be_bytes());
    }
    let mut profile = flate2::write::ZlibEncoder::new(b"prof\0\0".to_vec(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..inflated >> 20 {
        profile.write_all(&zeros).expect("deflate");
    }
    let iccp = profile.finish().expect("deflate");
    let mut idat = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    idat.write_all(&[0, 1, 2, 3]).expect("deflate");
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
    chunk(&mut out, b"iCCP", &iccp);
    chunk(&mut out, b"IDAT", &idat.finish().expect("deflate"));
    chunk(&mut out, b"IEND", &[]);
    out
}

/// A GIF whose logical screen (what [`dimensions`] reads) is 1×1 but
/// whose first frame is 3500×3500 pixels of one colour: 10,579 bytes,
/// made with Pillow (a 3500×3500 GIF, bytes 6..10 set to 1×1).
const GIF_1X1_SCREEN_3500_FRAME: &[u8] = include_bytes!("../testdata/gif-1x1-screen-3500x3500-frame.gif");

/// Found by a hostile test (sixth breaker run): the decode budget counts
/// the pixels of a GIF's logical screen, but the `image` crate decodes a
/// first frame larger than the screen into a buffer of its own (up to the
/// `gif` crate's 50 MB per frame, within the 64 MiB it had), so a 10 KB
/// GIF that is 1×1 by its header costs 47 MiB; 20 uploaded at once took
/// the server's peak from 79 to 905 MiB, each holding one permit of 763.
#[test]
fn a_gif_whose_first_frame_is_larger_than_its_screen_costs_no_more_than_its_screen() {
    let _one = one_at_a_time();
    let before = peak_rss();
    assert_eq!(
        dimensions(GIF_1X1_SCREEN_3500_FRAME, ImageFormat::Gif, 1_000_000).expect("header"),
        (1, 1)
    );
    // A frame outside the screen makes it an invalid GIF: refused, and
    // without costing the frame's pixels.
    assert_eq!(
        inspect(GIF_1X1_SCREEN_3500_FRAME, ImageFormat::Gif, 1_000_000, 320).unwrap_err(),
        ImageRefusal::Undecodable("image/gif")
    );
    let grew = peak_rss().saturating_sub(before);
    assert!(
        grew < 16 << 20,
        "reading a GIF that is 1×1 by its header raised the peak memory by {} MiB",
        grew >> 20
    );
}

#[test]
fn gifs_within_their_screen_still_decode_in_the_tighter_room() {
    let _one = one_at_a_time();
    for (width, height) in [(1, 1), (300, 200), (2000, 1500)] {
        let image = image::RgbaImage::from_pixel(width, height, image::Rgba([10, 200, 30, 255]));
        let mut gif = Cursor::new(Vec::new());
        image.write_to(&mut gif, ImageFormat::Gif).expect("encode");
        let inspected = inspect(gif.get_ref(), ImageFormat::Gif, 50_000_000, 320).expect("a valid GIF decodes");
        assert_eq!((inspected.width, inspected.height), (width, height));
    }
}

/// Held by every test of the image decoders, so one runs at a time: those
/// that measure the process's peak memory (`VmHWM`) must not count another
/// test's allocations, which `cargo test` runs on threads of the same
/// process (a 256 MiB profile built by one test once showed in another's
/// figure). A test that panicked leaves it usable.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Waits for [`ONE_AT_A_TIME`]; hold the guard for the whole test.
pub(super) fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The process's peak resident memory so far (`VmHWM`), bytes.
pub(super) fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("VmHWM");
    kib * 1024
}

/// Found by a hostile test: a 1 MiB PNG whose colour profile inflates to
/// 1 GiB took the server from 20 to 536 MiB while only its header was
/// read (the decoder's default limit, 512 MiB), before any decode
/// permit. Now the header read and the decode stay within
/// METADATA_ALLOC_BYTES of metadata; the image still decodes. (256 MiB
/// here keeps the test quick; before the fix it raised the peak by as
/// much.)
#[test]
fn a_png_whose_colour_profile_inflates_to_256_mib_costs_no_more_than_its_bound() {
    let _one = one_at_a_time();
    let bomb = png_with_iccp_bomb(256 << 20);
    assert!(bomb.len() < 1 << 20, "the bomb is {} bytes", bomb.len());
    let before = peak_rss();
    assert_eq!(dimensions(&bomb, ImageFormat::Png, 1_000_000).expect("header"), (1, 1));
    let inspected = inspect(&bomb, ImageFormat::Png, 1_000_000, 320).expect("decode");
    assert_eq!((inspected.width, inspected.height), (1, 1));
    let grew = peak_rss().saturating_sub(before);
    assert!(
        grew < 6 * METADATA_ALLOC_BYTES,
        "reading a 1×1 PNG raised the peak memory by {} MiB",
        grew >> 20
    );
}
