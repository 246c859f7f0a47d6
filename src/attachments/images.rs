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

use std::io::{BufRead, Cursor, Read, Seek, SeekFrom};

use image::{ImageFormat, ImageReader, Limits};

pub mod webp;

/// Most bytes a decoder may allocate while it reads an image's header, and
/// (for a PNG) above its pixels while it decodes it: a PNG's inflated
/// metadata (`iCCP`, `zTXt`, `iTXt`) and its row buffers. Real colour
/// profiles are a few KiB to about 1 MiB. A PNG profile that inflates past
/// this is dropped by the decoder (the image still decodes, without it).
pub const METADATA_ALLOC_BYTES: u64 = 8 * 1024 * 1024;

/// Room above the pixels for the other decoders' own buffers (JPEG's
/// component planes), bytes. WebP is decoded by libwebp ([`webp`]), which
/// takes no limit: its memory is bounded by its pixels and counted by
/// [`decode_charge`].
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
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
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

/// Bytes of decode memory one pixel of the decode budget stands for: a
/// decode may allocate 8 bytes a pixel (RGBA of 16 bits per channel), so
/// other memory a decode holds is charged at one pixel per 8 bytes.
pub const BYTES_PER_PIXEL: u64 = 8;

/// The share of the decode budget (in pixels, as `max_image_pixels`
/// counts) that decoding the image in `file`, of `width` × `height` by its
/// header and of `format`, takes while it runs; at most
/// `max_pixels.max(pixels)`:
///
/// - its pixels;
/// - for JPEG and WebP, the file's bytes at [`BYTES_PER_PIXEL`] (their
///   decoders read the whole file into memory; PNG and GIF stream it);
/// - for a WebP holding lossless data (a `VP8L` image, or an `ALPH` plane,
///   also inside animation frames), the prefix-code groups libwebp may
///   build: [`webp::lossless_groups`] of its canvas, each
///   [`webp::LOSSLESS_GROUP_BYTES`] at [`BYTES_PER_PIXEL`]. A small
///   lossless WebP (an icon, a sticker) takes a small share; one of about
///   a megapixel or more can name 65,536 groups (1.3 GiB) and takes the
///   whole budget, so such decodes run one at a time on a node.
///
/// # Errors
/// Reading `file`.
pub fn decode_charge<R: Read + Seek>(
    file: &mut R,
    format: ImageFormat,
    (width, height): (u32, u32),
    max_pixels: u64,
) -> std::io::Result<u64> {
    let pixels = u64::from(width) * u64::from(height);
    let mut charge = pixels;
    if matches!(format, ImageFormat::Jpeg | ImageFormat::WebP) {
        let len = file.seek(SeekFrom::End(0))?;
        charge = charge.saturating_add(len.div_ceil(BYTES_PER_PIXEL));
    }
    if format == ImageFormat::WebP && webp_has_lossless_data(file)? {
        let groups = webp::lossless_groups(width, height);
        charge = charge.saturating_add(groups * webp::LOSSLESS_GROUP_BYTES / BYTES_PER_PIXEL);
    }
    Ok(charge.min(max_pixels.max(pixels)))
}

/// Whether the WebP file `file` holds a `VP8L` or `ALPH` chunk, at its top
/// level or in an `ANMF` frame; `true` for a file whose chunks do not parse
/// (the decoder will judge it, under the stricter charge). Reads the
/// chunks' headers only.
///
/// # Errors
/// Reading `file` (other than its end).
fn webp_has_lossless_data<R: Read + Seek>(file: &mut R) -> std::io::Result<bool> {
    /// Whether the `left` bytes of chunks from the current position hold
    /// lossless data (`Ok(true)` too when they do not parse).
    fn in_chunks<R: Read + Seek>(file: &mut R, mut left: u64, depth: u8) -> std::io::Result<bool> {
        while left > 0 {
            let mut head = [0u8; 8];
            if left < 8 || read_all(file, &mut head)? < 8 {
                return Ok(true);
            }
            left -= 8;
            let (fourcc, size) = head.split_at(4);
            let size = u64::from(u32::from_le_bytes([size[0], size[1], size[2], size[3]]));
            if size > left {
                return Ok(true);
            }
            match fourcc {
                b"VP8L" | b"ALPH" => return Ok(true),
                // An animation frame: 16 bytes of its own, then its chunks.
                b"ANMF" if depth == 0 => {
                    if size < 16 {
                        return Ok(true);
                    }
                    file.seek(SeekFrom::Current(16))?;
                    if in_chunks(file, size - 16, 1)? {
                        return Ok(true);
                    }
                }
                _ => {
                    file.seek(SeekFrom::Current(i64::try_from(size).unwrap_or(i64::MAX)))?;
                }
            }
            left -= size;
            if size & 1 == 1 {
                if left == 0 {
                    break;
                }
                file.seek(SeekFrom::Current(1))?;
                left -= 1;
            }
        }
        Ok(false)
    }
    let len = file.seek(SeekFrom::End(0))?;
    file.rewind()?;
    let mut head = [0u8; 12];
    if read_all(file, &mut head)? < 12 || &head[..4] != b"RIFF" || &head[8..] != b"WEBP" {
        return Ok(true);
    }
    in_chunks(file, len - 12, 0)
}

/// Reads into `buf` until it is full or the file ends; how many bytes came.
fn read_all<R: Read>(file: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The width and height of `bytes` as an image of `format`; see
/// [`dimensions_of`].
///
/// # Errors
/// As [`dimensions_of`].
pub fn dimensions(bytes: &[u8], format: ImageFormat, max_pixels: u64) -> Result<(u32, u32), ImageRefusal> {
    dimensions_of(&mut Cursor::new(bytes), format, max_pixels)
}

/// The width and height of the image in `file` (read from its start) as
/// an image of `format`, read from its header only (cheap whatever the
/// image's size: at most [`METADATA_ALLOC_BYTES`] allocated, whatever its
/// metadata inflates to). PNG and GIF headers are read as a stream; for
/// JPEG and WebP, whose decoders take the whole file, only its first
/// [`METADATA_ALLOC_BYTES`] are read, so a header past them (more than
/// 8 MiB of metadata before the image) is refused as undecodable.
///
/// # Errors
/// [`ImageRefusal::Undecodable`] when the header does not read as `format`
/// (or `file` cannot be read); [`ImageRefusal::TooManyPixels`] over
/// `max_pixels` (or for 0 pixels).
pub fn dimensions_of<R: BufRead + Seek>(
    file: &mut R,
    format: ImageFormat,
    max_pixels: u64,
) -> Result<(u32, u32), ImageRefusal> {
    let undecodable = ImageRefusal::Undecodable(format.to_mime_type());
    file.rewind().map_err(|_| undecodable.clone())?;
    let (width, height) = match format {
        ImageFormat::Jpeg | ImageFormat::WebP => {
            let mut prefix = Vec::new();
            file.by_ref()
                .take(METADATA_ALLOC_BYTES)
                .read_to_end(&mut prefix)
                .map_err(|_| undecodable.clone())?;
            if format == ImageFormat::WebP {
                webp::dimensions(&prefix).ok_or(undecodable)?
            } else {
                header_dimensions(Cursor::new(prefix), format).ok_or(undecodable)?
            }
        }
        _ => header_dimensions(file, format).ok_or(undecodable)?,
    };
    let pixels = u64::from(width) * u64::from(height);
    if pixels > max_pixels || pixels == 0 {
        return Err(ImageRefusal::TooManyPixels {
            pixels,
            max: max_pixels,
        });
    }
    Ok((width, height))
}

/// The `image` crate's reading of an image header, at most
/// [`METADATA_ALLOC_BYTES`] allocated.
fn header_dimensions<R: BufRead + Seek>(file: R, format: ImageFormat) -> Option<(u32, u32)> {
    let mut reader = ImageReader::with_format(file, format);
    let mut limits = Limits::default();
    limits.max_alloc = Some(METADATA_ALLOC_BYTES);
    reader.limits(limits);
    reader.into_dimensions().ok()
}

/// Checks and measures `bytes` as an image of `format`; see [`inspect_file`].
///
/// # Errors
/// As [`inspect_file`].
pub fn inspect(
    bytes: &[u8],
    format: ImageFormat,
    max_pixels: u64,
    thumbnail_px: u32,
) -> Result<Inspected, ImageRefusal> {
    inspect_file(&mut Cursor::new(bytes), format, max_pixels, thumbnail_px)
}

/// Checks and measures the image in `file` (read from its start) as an
/// image of `format`, and makes its thumbnail of at most `thumbnail_px` on
/// the longer side. PNG and GIF are decoded as a stream from `file`; JPEG
/// and WebP are read into memory first (their decoders need the whole
/// file; [`decode_charge`] counts it). CPU-bound and blocking: run it off
/// the async workers, holding the decode permit.
///
/// # Errors
/// [`ImageRefusal`] for an image over `max_pixels` or one that does not
/// decode (or a `file` that cannot be read).
pub fn inspect_file<R: BufRead + Seek>(
    file: &mut R,
    format: ImageFormat,
    max_pixels: u64,
    thumbnail_px: u32,
) -> Result<Inspected, ImageRefusal> {
    let name = format.to_mime_type();
    let undecodable = |_| ImageRefusal::Undecodable(name);
    let (width, height) = dimensions_of(file, format, max_pixels)?;
    let pixels = u64::from(width) * u64::from(height);
    file.rewind().map_err(|_| ImageRefusal::Undecodable(name))?;
    let image = if format == ImageFormat::WebP {
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|_| ImageRefusal::Undecodable(name))?;
        let decoded = webp::decode(&bytes, width, height).ok_or(ImageRefusal::Undecodable(name))?;
        image::DynamicImage::ImageRgba8(decoded)
    } else {
        let mut reader = ImageReader::with_format(file, format);
        let mut limits = Limits::default();
        limits.max_image_width = Some(width);
        limits.max_image_height = Some(height);
        // RGBA of 16 bits per channel at most, with room for the decoder's
        // own buffers; a PNG's decoder spends that room on its metadata
        // too, so it gets only what its metadata may take.
        let room = match format {
            ImageFormat::Png => METADATA_ALLOC_BYTES,
            ImageFormat::Gif => GIF_ALLOC_BYTES,
            _ => DECODER_ALLOC_BYTES,
        };
        limits.max_alloc = Some(pixels.saturating_mul(BYTES_PER_PIXEL).saturating_add(room));
        reader.limits(limits);
        reader.decode().map_err(undecodable)?
    };
    let small = image.thumbnail(thumbnail_px, thumbnail_px).to_rgb8();
    drop(image);
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
#[cfg(test)]
mod webp_tests;
