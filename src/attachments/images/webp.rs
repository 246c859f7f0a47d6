//! WebP decoded with libwebp (through the `webp` crate), not `image-webp`.
//!
//! Why: `image-webp` (0.2.4) builds the tables of every prefix-code group a
//! lossless (`VP8L`) stream names, up to 65,536 of about 56 KiB each,
//! outside any limit: a 1.8 MB file that is 1×1 by its header took 550 MiB
//! (docs/known-issues.md). libwebp builds only the groups its entropy image
//! uses (since 2018), and that image has at most one pixel per 4×4 pixels of
//! the image, so what a lossless decode allocates is bounded by the image's
//! pixels: see [`LOSSLESS_GROUP_BYTES`] and `images::decode_charge`.
//!
//! An animated WebP is read as its first frame, placed on its canvas (as the
//! `image` crate did): the frame's chunks are taken out of the container in
//! safe Rust and decoded as a still image of their own, so at most the
//! canvas and one frame are held, whatever the number of frames.

use image::buffer::ConvertBuffer;
use image::{Rgba, RgbaImage};

/// Most bytes libwebp allocates for one prefix-code group of a lossless
/// stream: its five codes' tables (`kTableSize`, at most 5,004 entries of 4
/// bytes, for a colour cache of 11 bits) and its `HTreeGroup` (568 bytes),
/// rounded up to 21 KiB.
pub const LOSSLESS_GROUP_BYTES: u64 = 21 * 1024;

/// Most prefix-code groups a lossless stream of `width` × `height` pixels
/// can make libwebp build: one per pixel of its entropy image (at least 4×4
/// pixels of the image each), and 65,536 at most (a group's index is 16
/// bits).
pub fn lossless_groups(width: u32, height: u32) -> u64 {
    (u64::from(width.div_ceil(4)) * u64::from(height.div_ceil(4))).min(65_536)
}

/// The canvas size of the WebP file `bytes` (an animation's canvas, else
/// the image's), from its header only; `None` when it does not read as WebP.
pub fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let features = webp::BitstreamFeatures::new(bytes)?;
    Some((features.width(), features.height()))
}

/// Decodes the WebP file `bytes`, of `width` × `height` by its header
/// (already checked against `max_image_pixels`): a still image, or an
/// animation's first frame on its canvas. `None` when it does not decode,
/// is not of that size, or its first frame does not lie within its canvas.
pub fn decode(bytes: &[u8], width: u32, height: u32) -> Option<RgbaImage> {
    let features = webp::BitstreamFeatures::new(bytes)?;
    if (features.width(), features.height()) != (width, height) {
        return None;
    }
    if !features.has_animation() {
        let image = webp::Decoder::new(bytes).decode()?;
        return to_rgba(&image, width, height);
    }
    let frame = first_frame(bytes)?;
    let (right, bottom) = (frame.x.checked_add(frame.width)?, frame.y.checked_add(frame.height)?);
    if right > width || bottom > height {
        return None;
    }
    let decoded = webp::Decoder::new(&frame.still).decode()?;
    let pixels = to_rgba(&decoded, frame.width, frame.height)?;
    drop(decoded);
    // The first frame on a transparent canvas: blending over transparent
    // pixels, or not blending, gives the frame's own pixels.
    let mut canvas = RgbaImage::from_pixel(width, height, Rgba([0, 0, 0, 0]));
    image::imageops::replace(&mut canvas, &pixels, i64::from(frame.x), i64::from(frame.y));
    Some(canvas)
}

/// libwebp's output as an RGBA image of `width` × `height`.
fn to_rgba(image: &webp::WebPImage, width: u32, height: u32) -> Option<RgbaImage> {
    if (image.width(), image.height()) != (width, height) {
        return None;
    }
    if image.is_alpha() {
        RgbaImage::from_raw(width, height, image.to_vec())
    } else {
        let rgb = image::ImageBuffer::<image::Rgb<u8>, &[u8]>::from_raw(width, height, image)?;
        Some(rgb.convert())
    }
}

/// An animation's first frame, as a still WebP file of its own.
struct Frame {
    /// Its place on the canvas, pixels.
    x: u32,
    y: u32,
    width: u32,
    height: u32,
    /// `RIFF` … `WEBP` holding the frame's image chunks.
    still: Vec<u8>,
}

/// The RIFF chunks in `data`: (fourcc, body, the whole chunk with its
/// header and padding); `None` for a chunk cut short.
fn chunks(mut data: &[u8]) -> impl Iterator<Item = Option<(&[u8], &[u8], &[u8])>> {
    std::iter::from_fn(move || {
        if data.is_empty() {
            return None;
        }
        let chunk = (|| {
            let (fourcc, rest) = data.split_at_checked(4)?;
            let size = rest.get(..4)?;
            let size = u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize;
            let body = rest.get(4..4usize.checked_add(size)?)?;
            let whole = (8 + size + (size & 1)).min(data.len());
            let (whole, next) = data.split_at(whole);
            data = next;
            Some((fourcc, body, whole))
        })();
        if chunk.is_none() {
            data = &[];
        }
        Some(chunk)
    })
}

/// The first `ANMF` chunk of the animated WebP `bytes`, with its image
/// chunks (`ALPH` and `VP8 `, or `VP8L`) made into a still WebP file.
fn first_frame(bytes: &[u8]) -> Option<Frame> {
    let top = bytes.strip_prefix(b"RIFF")?.get(8..)?;
    let anmf = chunks(top)
        .map_while(|c| c)
        .find_map(|(fourcc, body, _)| (fourcc == b"ANMF").then_some(body))?;
    let (head, inner) = anmf.split_at_checked(16)?;
    let u24 = |at: usize| u32::from(head[at]) | u32::from(head[at + 1]) << 8 | u32::from(head[at + 2]) << 16;
    let (mut alph, mut vp8, mut vp8l) = (None, None, None);
    for chunk in chunks(inner) {
        let (fourcc, _, whole) = chunk?;
        match fourcc {
            b"ALPH" => alph = alph.or(Some(whole)),
            b"VP8 " => vp8 = vp8.or(Some(whole)),
            b"VP8L" => vp8l = vp8l.or(Some(whole)),
            _ => {}
        }
    }
    let (width, height) = (u24(6) + 1, u24(9) + 1);
    let mut body = b"WEBP".to_vec();
    match (vp8l, vp8, alph) {
        (Some(lossless), None, _) => body.extend_from_slice(lossless),
        (None, Some(lossy), None) => body.extend_from_slice(lossy),
        (None, Some(lossy), Some(alpha)) => {
            // VP8X: alpha flag, canvas = the frame.
            body.extend_from_slice(b"VP8X\x0a\0\0\0\x10\0\0\0");
            body.extend_from_slice(&(width - 1).to_le_bytes()[..3]);
            body.extend_from_slice(&(height - 1).to_le_bytes()[..3]);
            body.extend_from_slice(alpha);
            body.extend_from_slice(lossy);
        }
        _ => return None,
    }
    let mut still = b"RIFF".to_vec();
    still.extend_from_slice(&u32::try_from(body.len()).ok()?.to_le_bytes());
    still.extend_from_slice(&body);
    Some(Frame {
        x: u24(0) * 2,
        y: u24(3) * 2,
        width,
        height,
        still,
    })
}
