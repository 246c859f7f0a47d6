//! Image attachments (protocol.md §15): the size read from the header
//! first (an image over `max_image_pixels` is refused before any pixel is
//! decoded: a "bomb" of 10,000 × 10,000 pixels in a few KiB costs nothing),
//! then a full decode under a memory limit (an image that does not decode
//! as its declared type is refused), then the thumbnail: at most
//! `attachment_thumbnail_px` on the longer side, aspect kept, as JPEG.
//!
//! A PNG's metadata is compressed too (an `iCCP` colour profile, `zTXt` and
//! `iTXt` text): a 1 MiB file can inflate to 1 GiB there before any pixel.
//! The decoders allocate at most [`METADATA_ALLOC_BYTES`] for it while the
//! header is read, and that much above the pixels while a PNG is decoded.

use std::io::Cursor;

use image::{ImageFormat, ImageReader, Limits};

/// Most bytes a decoder may allocate while it reads an image's header, and
/// (for a PNG) above its pixels while it decodes it: a PNG's inflated
/// metadata (`iCCP`, `zTXt`, `iTXt`) and its row buffers. Real colour
/// profiles are a few KiB to about 1 MiB. A PNG profile that inflates past
/// this is dropped by the decoder (the image still decodes, without it).
pub const METADATA_ALLOC_BYTES: u64 = 8 * 1024 * 1024;

/// Room above the pixels for the other decoders' own buffers (JPEG's
/// component planes, WebP's), bytes.
const DECODER_ALLOC_BYTES: u64 = 64 * 1024 * 1024;

/// Room above the pixels for a GIF's decoder, bytes. Its frame buffer fits
/// in the 8 bytes per pixel already allowed (a valid GIF's frames lie within
/// its logical screen) and its LZW tables take a few KiB; more room let a
/// first frame larger than the screen decode into a buffer of its own, up
/// to the `gif` crate's 50 MB per frame, from a 10 KB file that is 1×1 by
/// its header.
const GIF_ALLOC_BYTES: u64 = 1024 * 1024;

/// The media type of the thumbnails chatd makes.
pub const THUMBNAIL_TYPE: &str = "image/jpeg";

/// The `image` format of an image media type chatd decodes; `None` for any
/// other type (not checked as an image).
pub fn format_of(content_type: &str) -> Option<ImageFormat> {
    Some(match content_type {
        "image/png" => ImageFormat::Png,
        "image/jpeg" => ImageFormat::Jpeg,
        "image/gif" => ImageFormat::Gif,
        "image/webp" => ImageFormat::WebP,
        _ => return None,
    })
}

/// Why an image was refused (400 `invalid_field`, `field: "body"`).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ImageRefusal {
    /// It does not decode as its declared type.
    #[error("the body is not a valid {0} image")]
    Undecodable(&'static str),
    /// Width × height is over `max_image_pixels`.
    #[error("the image has {pixels} pixels, the limit is {max}")]
    TooManyPixels {
        /// Width × height, from its header.
        pixels: u64,
        /// `max_image_pixels`.
        max: u64,
    },
}

/// What an image upload is: its size and its thumbnail (JPEG bytes).
#[derive(Debug)]
pub struct Inspected {
    pub width: u32,
    pub height: u32,
    pub thumbnail: Vec<u8>,
}

/// The share of the decode budget (in pixels, as `max_image_pixels`
/// counts) that decoding `bytes` as `format`, of `pixels` by its header,
/// takes while it runs: its pixels, except for a WebP holding lossless data
/// (a `VP8L` image, or an `ALPH` plane, also inside animation frames),
/// which takes the whole budget (`max_pixels`), so such decodes run one at
/// a time on a node. Why: `image-webp` builds the tables of every
/// prefix-code group a lossless stream names (up to 65,536, about 56 KiB
/// each) outside any memory limit, so a 1.8 MB file that is 1×1 by its
/// header took 550 MiB to decode; its memory is not bounded by its pixels,
/// only its concurrency is bounded here (docs/known-issues.md).
pub fn decode_charge(bytes: &[u8], format: ImageFormat, pixels: u64, max_pixels: u64) -> u64 {
    if format == ImageFormat::WebP && webp_has_lossless_data(bytes) {
        max_pixels.max(pixels)
    } else {
        pixels
    }
}

/// Whether the WebP file `bytes` holds a `VP8L` or `ALPH` chunk, at its top
/// level or in an `ANMF` frame; `true` for a file whose chunks do not parse
/// (the decoder will judge it, under the stricter charge).
fn webp_has_lossless_data(bytes: &[u8]) -> bool {
    /// Whether the chunks in `data` (a list of RIFF chunks) hold lossless data.
    fn in_chunks(mut data: &[u8], depth: u8) -> bool {
        while !data.is_empty() {
            let Some((head, rest)) = data.split_at_checked(8) else {
                return true;
            };
            let (fourcc, size) = head.split_at(4);
            let size = u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize;
            let Some(body) = rest.get(..size) else { return true };
            match fourcc {
                b"VP8L" | b"ALPH" => return true,
                // An animation frame: 16 bytes of its own, then its chunks.
                b"ANMF" if depth == 0 && (body.len() < 16 || in_chunks(&body[16..], 1)) => return true,
                _ => {}
            }
            data = rest.get(size + (size & 1)..).unwrap_or_default();
        }
        false
    }
    match bytes {
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', chunks @ ..] => in_chunks(chunks, 0),
        _ => true,
    }
}

/// The width and height of `bytes` as an image of `format`, read from its
/// header only (cheap whatever the image's size: at most
/// [`METADATA_ALLOC_BYTES`] allocated, whatever its metadata inflates to).
///
/// # Errors
/// [`ImageRefusal::Undecodable`] when the header does not read as `format`;
/// [`ImageRefusal::TooManyPixels`] over `max_pixels` (or for 0 pixels).
pub fn dimensions(bytes: &[u8], format: ImageFormat, max_pixels: u64) -> Result<(u32, u32), ImageRefusal> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_alloc = Some(METADATA_ALLOC_BYTES);
    reader.limits(limits);
    let (width, height) = reader
        .into_dimensions()
        .map_err(|_| ImageRefusal::Undecodable(format.to_mime_type()))?;
    let pixels = u64::from(width) * u64::from(height);
    if pixels > max_pixels || pixels == 0 {
        return Err(ImageRefusal::TooManyPixels {
            pixels,
            max: max_pixels,
        });
    }
    Ok((width, height))
}

/// Checks and measures `bytes` as an image of `format`, and makes its
/// thumbnail of at most `thumbnail_px` on the longer side. CPU-bound: run
/// it off the async workers.
///
/// # Errors
/// [`ImageRefusal`] for an image over `max_pixels` or one that does not decode.
pub fn inspect(
    bytes: &[u8],
    format: ImageFormat,
    max_pixels: u64,
    thumbnail_px: u32,
) -> Result<Inspected, ImageRefusal> {
    let name = format.to_mime_type();
    let undecodable = |_| ImageRefusal::Undecodable(name);
    let (width, height) = dimensions(bytes, format, max_pixels)?;
    let pixels = u64::from(width) * u64::from(height);
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(width);
    limits.max_image_height = Some(height);
    // RGBA of 16 bits per channel at most, with room for the decoder's own
    // buffers; a PNG's decoder spends that room on its metadata too, so it
    // gets only what its metadata may take.
    let room = match format {
        ImageFormat::Png => METADATA_ALLOC_BYTES,
        ImageFormat::Gif => GIF_ALLOC_BYTES,
        _ => DECODER_ALLOC_BYTES,
    };
    limits.max_alloc = Some(pixels.saturating_mul(8).saturating_add(room));
    reader.limits(limits);
    let image = reader.decode().map_err(undecodable)?;
    let small = image.thumbnail(thumbnail_px, thumbnail_px).to_rgb8();
    let mut thumbnail = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut thumbnail, 80)
        .encode_image(&small)
        .map_err(undecodable)?;
    Ok(Inspected {
        width,
        height,
        thumbnail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbImage::from_pixel(width, height, image::Rgb([200, 10, 10]));
        let mut out = Cursor::new(Vec::new());
        image.write_to(&mut out, ImageFormat::Png).expect("encode");
        out.into_inner()
    }

    #[test]
    fn an_image_is_measured_and_its_thumbnail_keeps_the_aspect() {
        let inspected = inspect(&png(640, 320), ImageFormat::Png, 1_000_000, 320).expect("png");
        assert_eq!((inspected.width, inspected.height), (640, 320));
        let thumb = image::load_from_memory_with_format(&inspected.thumbnail, ImageFormat::Jpeg).expect("jpeg");
        assert_eq!((thumb.width(), thumb.height()), (320, 160));
    }

    #[test]
    fn too_many_pixels_and_undecodable_bodies_are_refused() {
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
    const GIF_1X1_SCREEN_3500_FRAME: &[u8] = include_bytes!("testdata/gif-1x1-screen-3500x3500-frame.gif");

    /// Found by a hostile test (sixth breaker run): the decode budget counts
    /// the pixels of a GIF's logical screen, but the `image` crate decodes a
    /// first frame larger than the screen into a buffer of its own (up to the
    /// `gif` crate's 50 MB per frame, within the 64 MiB it had), so a 10 KB
    /// GIF that is 1×1 by its header costs 47 MiB; 20 uploaded at once took
    /// the server's peak from 79 to 905 MiB, each holding one permit of 763.
    #[test]
    fn a_gif_whose_first_frame_is_larger_than_its_screen_costs_no_more_than_its_screen() {
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
    fn a_webp_with_lossless_data_takes_the_whole_decode_budget() {
        fn webp(chunks: &[(&[u8; 4], Vec<u8>)]) -> Vec<u8> {
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
        let lossless = {
            let image = image::RgbaImage::from_pixel(4, 4, image::Rgba([1, 2, 3, 255]));
            let mut out = Cursor::new(Vec::new());
            image.write_to(&mut out, ImageFormat::WebP).expect("encode");
            out.into_inner()
        };
        let charge = |bytes: &[u8]| decode_charge(bytes, ImageFormat::WebP, 16, 1_000);
        assert_eq!(charge(&lossless), 1_000, "the image crate writes lossless WebP");
        assert_eq!(charge(&webp(&[(b"VP8 ", vec![0; 11])])), 16, "lossy");
        assert_eq!(
            charge(&webp(&[
                (b"VP8X", vec![0; 10]),
                (b"ALPH", vec![0; 3]),
                (b"VP8 ", vec![0; 9])
            ])),
            1_000
        );
        let mut frame = vec![0u8; 16];
        frame.extend_from_slice(b"VP8L");
        frame.extend_from_slice(&4u32.to_le_bytes());
        frame.extend_from_slice(&[0; 4]);
        assert_eq!(
            charge(&webp(&[(b"VP8X", vec![0; 10]), (b"ANMF", frame)])),
            1_000,
            "in a frame"
        );
        assert_eq!(charge(b"RIFF\x10\0\0\0WEBPVP8 \xff\xff\0\0"), 1_000, "cut short");
        assert_eq!(
            decode_charge(&lossless, ImageFormat::Png, 16, 1_000),
            16,
            "other formats"
        );
    }

    #[test]
    fn gifs_within_their_screen_still_decode_in_the_tighter_room() {
        for (width, height) in [(1, 1), (300, 200), (2000, 1500)] {
            let image = image::RgbaImage::from_pixel(width, height, image::Rgba([10, 200, 30, 255]));
            let mut gif = Cursor::new(Vec::new());
            image.write_to(&mut gif, ImageFormat::Gif).expect("encode");
            let inspected = inspect(gif.get_ref(), ImageFormat::Gif, 50_000_000, 320).expect("a valid GIF decodes");
            assert_eq!((inspected.width, inspected.height), (width, height));
        }
    }

    /// The process's peak resident memory so far (`VmHWM`), bytes.
    fn peak_rss() -> u64 {
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
}
