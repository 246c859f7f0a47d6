// Real PNG files made in the test (node built-ins only, so the console's tests can compile
// this file too): a gradient of any size, and a "bomb" whose header claims more pixels than
// the server takes. The bytes are a valid PNG (signature, IHDR, zlib IDAT, IEND, CRCs).
import { deflateSync } from 'node:zlib';

const CRC_TABLE: Uint32Array = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(kind: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(kind, 4, 'latin1');
  const body = Buffer.concat([head.subarray(4), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body), 0);
  return Buffer.concat([head.subarray(0, 4), body, crc]);
}

function ihdr(width: number, height: number): Buffer {
  const h = Buffer.alloc(13);
  h.writeUInt32BE(width, 0);
  h.writeUInt32BE(height, 4);
  h[8] = 8; // bit depth
  h[9] = 2; // RGB
  return h;
}

const SIGNATURE = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);

/** An RGB PNG of `width` × `height` pixels: a colour gradient in bands (a few KiB for 400 × 300). */
export function png(width: number, height: number): Uint8Array<ArrayBuffer> {
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) {
      // bands 25 pixels wide and high: a gradient that compresses well (small files)
      row[1 + x * 3] = (Math.floor(x / 25) * 25 * 255) / Math.max(1, width - 1);
      row[2 + x * 3] = (Math.floor(y / 25) * 25 * 255) / Math.max(1, height - 1);
      row[3 + x * 3] = 128;
    }
    rows.push(row);
  }
  return new Uint8Array(Buffer.concat([SIGNATURE, chunk('IHDR', ihdr(width, height)), chunk('IDAT', deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))]));
}

/** A PNG whose header says 10,000 × 10,000 pixels, in a few hundred bytes (a decompression bomb's header). */
export function pngBomb(): Uint8Array<ArrayBuffer> {
  const row = Buffer.alloc(1 + 10_000 * 3);
  return new Uint8Array(Buffer.concat([SIGNATURE, chunk('IHDR', ihdr(10_000, 10_000)), chunk('IDAT', deflateSync(row)), chunk('IEND', Buffer.alloc(0))]));
}
