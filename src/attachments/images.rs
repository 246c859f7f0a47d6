//! Image attachments (protocol.md §15): the size read from the header
//! first (an image over `max_image_pixels` is refused before any pixel is
//! decoded: a "bomb" of 10,000 × 10,000 pixels in a few KiB costs nothing),
//! then a full decode under a memory limit (an image that does not decode
//! as its declared type is refused), then the thumbnail: at most
//! `attachment_thumbnail_px` on the longer side, aspect kept, as JPEG.

use std::io::Cursor;

use image::{ImageFormat, ImageReader, Limits};

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

/// The width and height of `bytes` as an image of `format`, read from its
/// header only (cheap whatever the image's size).
///
/// # Errors
/// [`ImageRefusal::Undecodable`] when the header does not read as `format`;
/// [`ImageRefusal::TooManyPixels`] over `max_pixels` (or for 0 pixels).
pub fn dimensions(bytes: &[u8], format: ImageFormat, max_pixels: u64) -> Result<(u32, u32), ImageRefusal> {
    let (width, height) = ImageReader::with_format(Cursor::new(bytes), format)
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
    // RGBA of 16 bits per channel at most, with room for the decoder's own buffers.
    limits.max_alloc = Some(pixels.saturating_mul(8).saturating_add(64 * 1024 * 1024));
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
}
