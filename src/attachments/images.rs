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
mod tests;
