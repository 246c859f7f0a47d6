//! Unit tests of WebP through libwebp: stills, animations, the decode
//! charge, and the prefix-code-group bombs hostile tests found.

use super::tests::{one_at_a_time, peak_rss, png};
use super::*;

/// A WebP file of `chunks` (fourcc, body).
fn webp_file(chunks: &[(&[u8; 4], Vec<u8>)]) -> Vec<u8> {
    let mut body = b"WEBP".to_vec();
    for (fourcc, data) in chunks {
        body.extend_from_slice(*fourcc);
        body.extend_from_slice(&u32::try_from(data.len()).expect("size").to_le_bytes());
        body.extend_from_slice(data);
        if data.len() % 2 == 1 {
            body.push(0);
        }
    }
    let mut file = b"RIFF".to_vec();
    file.extend_from_slice(&u32::try_from(body.len()).expect("size").to_le_bytes());
    file.extend_from_slice(&body);
    file
}

/// A `width` × `height` WebP of one colour (libwebp's encoder).
fn webp_image(width: u32, height: u32, lossless: bool, alpha: u8) -> Vec<u8> {
    let pixels = [10, 200, 30, alpha].repeat((width * height) as usize);
    let encoder = ::webp::Encoder::from_rgba(&pixels, width, height);
    let out = if lossless {
        encoder.encode_lossless()
    } else {
        encoder.encode(80.0)
    };
    out.to_vec()
}

fn charge(bytes: &[u8], format: ImageFormat, size: (u32, u32), max: u64) -> u64 {
    decode_charge(&mut Cursor::new(bytes), format, size, max).expect("in memory")
}

#[test]
fn a_webp_with_lossless_data_is_charged_its_prefix_code_groups() {
    let _one = one_at_a_time();
    let lossless = webp_image(4, 4, true, 255);
    assert!(lossless.windows(4).any(|w| w == b"VP8L"), "libwebp writes VP8L");
    let len = |b: &[u8]| (b.len() as u64).div_ceil(BYTES_PER_PIXEL);
    let group = webp::LOSSLESS_GROUP_BYTES / BYTES_PER_PIXEL;
    let max = 100_000_000;
    // 4×4 pixels: at most one group.
    let bytes = lossless.as_slice();
    assert_eq!(charge(bytes, ImageFormat::WebP, (4, 4), max), 16 + len(bytes) + group);
    let lossy = webp_file(&[(b"VP8 ", vec![0; 11])]);
    assert_eq!(
        charge(&lossy, ImageFormat::WebP, (4, 4), max),
        16 + len(&lossy),
        "lossy"
    );
    let alpha = webp_file(&[(b"VP8X", vec![0; 10]), (b"ALPH", vec![0; 3]), (b"VP8 ", vec![0; 9])]);
    assert_eq!(charge(&alpha, ImageFormat::WebP, (4, 4), max), 16 + len(&alpha) + group);
    let mut frame = vec![0u8; 16];
    frame.extend_from_slice(b"VP8L");
    frame.extend_from_slice(&4u32.to_le_bytes());
    frame.extend_from_slice(&[0; 4]);
    let animated = webp_file(&[(b"VP8X", vec![0; 10]), (b"ANMF", frame)]);
    assert_eq!(
        charge(&animated, ImageFormat::WebP, (4, 4), max),
        16 + len(&animated) + group,
        "in a frame"
    );
    let cut = b"RIFF\x10\0\0\0WEBPVP8 \xff\xff\0\0";
    assert_eq!(
        charge(cut, ImageFormat::WebP, (4, 4), max),
        16 + len(cut) + group,
        "cut short"
    );
    // One group per 4×4 pixels, 65,536 at most; the whole budget at most.
    assert_eq!(
        charge(bytes, ImageFormat::WebP, (400, 40), max),
        16_000 + len(bytes) + 1_000 * group
    );
    assert_eq!(
        charge(bytes, ImageFormat::WebP, (4_000, 4_000), u64::MAX),
        16_000_000 + len(bytes) + 65_536 * group
    );
    assert_eq!(charge(bytes, ImageFormat::WebP, (4_000, 4_000), 50_000_000), 50_000_000);
    // PNG and GIF are decoded as a stream: their pixels only. A JPEG's
    // decoder reads the whole file.
    assert_eq!(charge(bytes, ImageFormat::Png, (4, 4), max), 16, "other formats");
    assert_eq!(charge(bytes, ImageFormat::Gif, (4, 4), max), 16);
    assert_eq!(charge(bytes, ImageFormat::Jpeg, (4, 4), max), 16 + len(bytes));
}

#[test]
fn webp_stills_and_animations_decode_with_libwebp() {
    let _one = one_at_a_time();
    for (width, height, lossless, alpha) in [
        (1, 1, true, 255),
        (300, 200, false, 255),
        (64, 640, true, 128),
        (33, 17, false, 7),
    ] {
        let file = webp_image(width, height, lossless, alpha);
        let inspected = inspect(&file, ImageFormat::WebP, 1_000_000, 320).expect("a valid WebP decodes");
        assert_eq!((inspected.width, inspected.height), (width, height));
        let thumb = image::load_from_memory_with_format(&inspected.thumbnail, ImageFormat::Jpeg).expect("jpeg");
        assert_eq!(thumb.width().max(thumb.height()), 320, "as the image crate scales");
        // Over max_image_pixels, cut short, or not WebP: refused.
        let pixels = u64::from(width * height);
        assert_eq!(
            inspect(&file, ImageFormat::WebP, pixels - 1, 320).unwrap_err(),
            ImageRefusal::TooManyPixels {
                pixels,
                max: pixels - 1
            }
        );
        assert_eq!(
            inspect(&file[..file.len() - 8], ImageFormat::WebP, 1_000_000, 320).unwrap_err(),
            ImageRefusal::Undecodable("image/webp")
        );
    }
    assert_eq!(
        inspect(&png(8, 8), ImageFormat::WebP, 1_000_000, 320).unwrap_err(),
        ImageRefusal::Undecodable("image/webp")
    );
    // An animation: its first frame on its canvas.
    let config = ::webp::WebPConfig::new().expect("config");
    let red = [250, 0, 0, 255].repeat(60 * 40);
    let blue = [0, 0, 250, 255].repeat(60 * 40);
    let mut encoder = ::webp::AnimEncoder::new(60, 40, &config);
    encoder.add_frame(::webp::AnimFrame::from_rgba(&red, 60, 40, 0));
    encoder.add_frame(::webp::AnimFrame::from_rgba(&blue, 60, 40, 100));
    let animation = encoder.encode().to_vec();
    assert_eq!(
        dimensions(&animation, ImageFormat::WebP, 10_000).expect("header"),
        (60, 40)
    );
    let inspected = inspect(&animation, ImageFormat::WebP, 10_000, 30).expect("an animation decodes");
    assert_eq!((inspected.width, inspected.height), (60, 40));
    let thumb = image::load_from_memory_with_format(&inspected.thumbnail, ImageFormat::Jpeg)
        .expect("jpeg")
        .to_rgb8();
    assert_eq!((thumb.width(), thumb.height()), (30, 20));
    let centre = thumb.get_pixel(15, 10);
    assert!(
        centre[0] > 200 && centre[2] < 50,
        "the first frame (red), not {centre:?}"
    );
    // Its first frame cut short: refused.
    assert_eq!(
        inspect(&animation[..animation.len() / 2], ImageFormat::WebP, 10_000, 30).unwrap_err(),
        ImageRefusal::Undecodable("image/webp")
    );
}

/// An animated WebP whose canvas is 2×2 and whose first frame, 4×4, lies
/// outside it: refused, as libwebp's own demuxer refuses it.
#[test]
fn an_animation_frame_outside_its_canvas_is_refused() {
    let _one = one_at_a_time();
    let still = webp_image(4, 4, false, 255);
    let vp8 = &still[12..];
    let mut frame = vec![0u8; 16];
    frame[6] = 3; // width - 1
    frame[9] = 3; // height - 1
    frame.extend_from_slice(vp8);
    let animation = |canvas: u8| {
        let mut vp8x = vec![0u8; 10];
        vp8x[0] = 0x02; // animation
        vp8x[4] = canvas - 1;
        vp8x[7] = canvas - 1;
        webp_file(&[(b"VP8X", vp8x), (b"ANIM", vec![0; 6]), (b"ANMF", frame.clone())])
    };
    let inspected = inspect(&animation(4), ImageFormat::WebP, 100, 30).expect("within its canvas");
    assert_eq!((inspected.width, inspected.height), (4, 4));
    let animation = animation(2);
    assert_eq!(dimensions(&animation, ImageFormat::WebP, 100).expect("header"), (2, 2));
    assert_eq!(
        inspect(&animation, ImageFormat::WebP, 100, 30).unwrap_err(),
        ImageRefusal::Undecodable("image/webp")
    );
}

/// What the upload route does: the image spooled to a file, read from it.
#[test]
fn an_image_is_read_from_its_spool_file() {
    let _one = one_at_a_time();
    use std::io::Write;
    for (format, bytes) in [
        (ImageFormat::Png, png(40, 30)),
        (ImageFormat::WebP, webp_image(40, 30, false, 255)),
    ] {
        let mut file = tempfile::tempfile().expect("temporary file");
        file.write_all(&bytes).expect("write");
        let mut file = std::io::BufReader::new(file);
        assert_eq!(dimensions_of(&mut file, format, 10_000).expect("header"), (40, 30));
        assert!(decode_charge(&mut file, format, (40, 30), 10_000).expect("charge") >= 1_200);
        let inspected = inspect_file(&mut file, format, 10_000, 20).expect("decode");
        assert_eq!((inspected.width, inspected.height), (40, 30));
    }
}

/// VP8L bits, least significant first, as the lossless WebP format
/// reads them.
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u8,
    n: u8,
}

impl Bits {
    fn put(&mut self, value: u32, nbits: u32) {
        for i in 0..nbits {
            self.acc |= u8::from((value >> i) & 1 == 1) << self.n;
            self.n += 1;
            if self.n == 8 {
                self.out.push(self.acc);
                (self.acc, self.n) = (0, 0);
            }
        }
    }

    /// A canonical Huffman code of `len` bits: its first bit read first.
    fn code(&mut self, code: u32, len: u32) {
        for i in (0..len).rev() {
            self.put((code >> i) & 1, 1);
        }
    }

    /// A "simple" prefix code of one symbol.
    fn single(&mut self, symbol: u32, eight_bits: bool) {
        self.put(1, 1);
        self.put(0, 1);
        self.put(u32::from(eight_bits), 1);
        self.put(symbol, if eight_bits { 8 } else { 1 });
    }
}

/// A 1×1 lossless WebP whose entropy image names `groups` prefix-code
/// groups, each with a green code of 2,048 symbols of 11 bits (a colour
/// cache of 11 bits): about 176 bytes a group in the file, about 56 KiB
/// a group in `image-webp`'s tables, all built before the one pixel.
fn webp_with_prefix_code_groups(groups: u32) -> Vec<u8> {
    let mut b = Bits::default();
    lossless_header(&mut b, 1);
    // The entropy image, 1×1: its one pixel names group `groups - 1`.
    b.put(0, 1);
    b.single((groups - 1) & 0xff, true); // green
    b.single((groups - 1) >> 8, true); // red
    for _ in 0..3 {
        b.single(0, false);
    }
    put_groups(&mut b, groups);
    lossless_file(b)
}

/// A `side` × `side` lossless WebP (`side` a multiple of 4, at most 1,024)
/// whose entropy image (one pixel per 4×4) names a group of its own in
/// each pixel, all `(side / 4)²` used; cut short after the groups' codes
/// (libwebp builds them all before the first pixel).
fn webp_using_prefix_code_groups(side: u32) -> Vec<u8> {
    let groups = (side / 4) * (side / 4);
    let mut b = Bits::default();
    lossless_header(&mut b, side);
    // The entropy image: no colour cache; green and red codes of 256
    // symbols of 8 bits (code-length code: "0" and "8" of 1 bit each, in
    // the order 17, 18, 0, 1, 2, 3, 4, 5, 16, 6, 7, 8).
    b.put(0, 1);
    for max_symbol in [true, false] {
        b.put(0, 1); // not simple
        b.put(12 - 4, 4);
        for l in [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1] {
            b.put(l, 3);
        }
        if max_symbol {
            // Green's alphabet is 280: 256 code lengths given, the rest 0.
            b.put(1, 1);
            b.put(3, 3);
            b.put(254, 8);
        } else {
            b.put(0, 1);
        }
        for _ in 0..256 {
            b.code(1, 1); // 8
        }
    }
    for _ in 0..3 {
        b.single(0, false);
    }
    for group in 0..groups {
        b.code(group & 0xff, 8); // green
        b.code(group >> 8, 8); // red
    }
    put_groups(&mut b, groups);
    lossless_file(b)
}

/// A lossless stream's header for a `side` × `side` image, up to its
/// entropy image: a colour cache of 11 bits, meta prefix codes of 2 bits.
fn lossless_header(b: &mut Bits, side: u32) {
    b.put(0x2f, 8); // signature, then width - 1, height - 1, alpha, version
    b.put(side - 1, 14);
    b.put(side - 1, 14);
    b.put(0, 4);
    b.put(0, 1); // no transform
    b.put(1, 1); // colour cache of 11 bits
    b.put(11, 4);
    b.put(1, 1); // meta prefix codes, 2 bits
    b.put(0, 3);
}

/// `groups` prefix-code groups, each with a green code of 2,048 symbols of
/// 11 bits: about 176 bytes each.
fn put_groups(b: &mut Bits, groups: u32) {
    // Code-length code: 11 as "0", 16 as "10", 18 as "11", in the
    // order 17, 18, 0, 1, 2, 3, 4, 5, 16, 6, 7, 8, 9, 10, 11.
    let lengths = [0, 2, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1];
    for _ in 0..groups {
        b.put(0, 1); // not simple
        b.put(15 - 4, 4);
        for l in lengths {
            b.put(l, 3);
        }
        b.put(0, 1); // as many code lengths as symbols (280 + 2048)
        for extra in [127, 120, 0] {
            b.code(3, 2); // 18: 11 + extra zeros (138 + 131 + 11 = 280)
            b.put(extra, 7);
        }
        b.code(0, 1); // 11
        for _ in 0..341 {
            b.code(2, 2); // 16: the previous length 6 more times
            b.put(3, 2);
        }
        b.code(0, 1); // 11: 2,048 in all
        for _ in 0..4 {
            b.single(0, false);
        }
    }
}

/// The bits of a lossless stream as a WebP file.
fn lossless_file(b: Bits) -> Vec<u8> {
    let mut data = b.out;
    data.push(b.acc);
    data.resize(data.len() + 16 + data.len() % 2, 0);
    let mut out = b"RIFF".to_vec();
    out.extend_from_slice(&u32::try_from(data.len() + 12).expect("size").to_le_bytes());
    out.extend_from_slice(b"WEBPVP8L");
    out.extend_from_slice(&u32::try_from(data.len()).expect("size").to_le_bytes());
    out.extend_from_slice(&data);
    out
}

/// What libwebp builds for a lossless WebP is within what
/// [`decode_charge`] charges it (at [`BYTES_PER_PIXEL`]): here a 256×256
/// image whose entropy image uses 4,096 groups (756 KB) raises the peak
/// by 56 MiB, charged 11 million pixels (85 MiB). (One of 1,024×1,024
/// using 65,536 groups, 12 MB, raised it by 870 MiB, charged 1.3 GiB: it
/// takes the whole budget; with `image-webp`, 65,536 groups took about
/// 3.6 GiB whatever the image's size.)
#[test]
fn a_lossless_webp_using_many_prefix_code_groups_costs_no_more_than_its_charge() {
    let _one = one_at_a_time();
    let side = 256;
    let bomb = webp_using_prefix_code_groups(side);
    let charge = decode_charge(&mut Cursor::new(&bomb), ImageFormat::WebP, (side, side), u64::MAX).expect("charge");
    let before = peak_rss();
    assert_eq!(
        dimensions(&bomb, ImageFormat::WebP, 1_000_000).expect("header"),
        (side, side)
    );
    // Cut short after the codes: refused, after building them.
    assert_eq!(
        inspect(&bomb, ImageFormat::WebP, 1_000_000, 320).unwrap_err(),
        ImageRefusal::Undecodable("image/webp")
    );
    let grew = peak_rss().saturating_sub(before);
    eprintln!(
        "{} bytes; the peak grew by {} MiB; charged {charge} pixels ({} MiB)",
        bomb.len(),
        grew >> 20,
        (charge * BYTES_PER_PIXEL) >> 20
    );
    assert!(
        grew > 16 << 20,
        "the groups were built ({} MiB): the test measures them",
        grew >> 20
    );
    assert!(
        grew < charge * BYTES_PER_PIXEL,
        "decoding it raised the peak memory by {} MiB, charged {} MiB",
        grew >> 20,
        (charge * BYTES_PER_PIXEL) >> 20
    );
}

/// Found by a hostile test (sixth breaker run): a lossless WebP that is
/// 1×1 by its header may hold up to 65,536 prefix-code groups, whose
/// tables `image-webp` builds outside the `image` crate's limits; a
/// 1.8 MB upload (10,000 groups) took the server's peak from 45 to 599
/// MiB and was stored (201), four at once to 2.2 GiB, each with one
/// decode permit. Here 1,500 groups (274 KB) cost 84 MiB. libwebp, which
/// decodes WebP now, builds only the groups the entropy image uses (one
/// here).
#[test]
fn a_webp_with_many_prefix_code_groups_costs_no_more_than_its_bound() {
    let _one = one_at_a_time();
    let bomb = webp_with_prefix_code_groups(1500);
    assert!(bomb.len() < 300_000, "the bomb is {} bytes", bomb.len());
    let before = peak_rss();
    assert_eq!(dimensions(&bomb, ImageFormat::WebP, 1_000_000).expect("header"), (1, 1));
    // Refused or decoded: either way it must not cost its tables.
    let _ = inspect(&bomb, ImageFormat::WebP, 1_000_000, 320);
    let grew = peak_rss().saturating_sub(before);
    assert!(
        grew < 16 << 20,
        "reading a WebP that is 1×1 by its header raised the peak memory by {} MiB",
        grew >> 20
    );
}
