//! Fuzzes the client frame decoder and validator: no input may panic.
//! Run from `fuzz/`:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run frame_decode -- -max_total_time=60 seeds/frame_decode`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(frame) = chatd::protocol::decode_client_frame(text) {
            let _ = frame.validate(16_384);
        }
    }
});
