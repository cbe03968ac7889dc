// The weight formats as ggml lays them out in the file, read in place from `w` (the
// tensor's bytes as words): each decoder gives element `j` of the block at byte `b`.
// The Rust side (gpu/kernels.rs) prepends `decode(base, c)`, which finds the block of a
// row's element `c` for one format.

fn byte_at(i: u32) -> u32 {
    return (w[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

fn half_at(i: u32) -> f32 {
    return unpack2x16float(byte_at(i) | (byte_at(i + 1u) << 8u)).x;
}

fn word_at(i: u32) -> u32 {
    return byte_at(i) | (byte_at(i + 1u) << 8u) | (byte_at(i + 2u) << 16u) | (byte_at(i + 3u) << 24u);
}

fn signed_byte(v: u32) -> f32 {
    return f32(i32(v << 24u) >> 24u);
}

fn f32_at(b: u32, j: u32) -> f32 {
    return bitcast<f32>(w[(b >> 2u) + j]);
}

fn f16_at(b: u32, j: u32) -> f32 {
    return half_at(b + 2u * j);
}

// 34 bytes: f16 d, 32 signed quants.
fn q8_0(b: u32, j: u32) -> f32 {
    return half_at(b) * signed_byte(byte_at(b + 2u + j));
}

// A nibble of 16 bytes at `qs`: quants j and j + 16 share byte j.
fn nibble(qs: u32, j: u32) -> u32 {
    return (byte_at(qs + (j & 15u)) >> ((j >> 4u) * 4u)) & 15u;
}

// 18 bytes: f16 d, 16 bytes of nibbles; value (q - 8)·d.
fn q4_0(b: u32, j: u32) -> f32 {
    return half_at(b) * (f32(nibble(b + 2u, j)) - 8.0);
}

// 20 bytes: f16 d, f16 m, 16 bytes of nibbles; value q·d + m.
fn q4_1(b: u32, j: u32) -> f32 {
    return f32(nibble(b + 4u, j)) * half_at(b) + half_at(b + 2u);
}

// 22 bytes: f16 d, 32 fifth bits, 16 bytes of nibbles; value (q - 16)·d.
fn q5_0(b: u32, j: u32) -> f32 {
    let q = nibble(b + 6u, j) | (((word_at(b + 2u) >> j) & 1u) << 4u);
    return half_at(b) * (f32(q) - 16.0);
}

// 24 bytes: f16 d, f16 m, 32 fifth bits, 16 bytes of nibbles; value q·d + m.
fn q5_1(b: u32, j: u32) -> f32 {
    let q = nibble(b + 8u, j) | (((word_at(b + 4u) >> j) & 1u) << 4u);
    return f32(q) * half_at(b) + half_at(b + 2u);
}

// Q4_K/Q5_K's 6-bit scale and min of sub-block `s` (of 8), in 12 bytes from byte 4.
fn scale_min(b: u32, s: u32) -> vec2<f32> {
    let at = b + 4u;
    if (s < 4u) {
        return vec2<f32>(f32(byte_at(at + s) & 63u), f32(byte_at(at + s + 4u) & 63u));
    }
    let sc = (byte_at(at + s + 4u) & 15u) | ((byte_at(at + s - 4u) >> 6u) << 4u);
    let m = (byte_at(at + s + 4u) >> 4u) | ((byte_at(at + s) >> 6u) << 4u);
    return vec2<f32>(f32(sc), f32(m));
}

// A K-quant's value from its quant and sub-block: d·scale·q − dmin·min.
fn with_min(b: u32, j: u32, q: u32) -> f32 {
    let sm = scale_min(b, j / 32u);
    return (half_at(b) * sm.x) * f32(q) - half_at(b + 2u) * sm.y;
}

// 144 bytes: f16 d, f16 dmin, 12 bytes of scales, 128 of nibbles (each 32 bytes hold
// two sub-blocks: low nibbles, then high).
fn q4_k(b: u32, j: u32) -> f32 {
    let byte = byte_at(b + 16u + (j / 64u) * 32u + (j & 31u));
    let q = (byte >> (((j / 32u) & 1u) * 4u)) & 15u;
    return with_min(b, j, q);
}

// 176 bytes: as Q4_K with 32 bytes of fifth bits (bit 2c + h of byte l for quant
// 64c + 32h + l) before the nibbles.
fn q5_k(b: u32, j: u32) -> f32 {
    let l = j & 31u;
    let sub = j / 32u;
    let byte = byte_at(b + 48u + (j / 64u) * 32u + l);
    let q = ((byte >> ((sub & 1u) * 4u)) & 15u) | (((byte_at(b + 16u + l) >> sub) & 1u) << 4u);
    return with_min(b, j, q);
}

// 210 bytes: 128 of low nibbles, 64 of high bit pairs, 16 signed scales, f16 d.
fn q6_k(b: u32, j: u32) -> f32 {
    let half = j / 128u;
    let quarter = (j & 127u) / 32u;
    let l = j & 31u;
    let low_byte = byte_at(b + 64u * half + l + 32u * (quarter & 1u));
    let low = (low_byte >> ((quarter / 2u) * 4u)) & 15u;
    let high = (byte_at(b + 128u + 32u * half + l) >> (2u * quarter)) & 3u;
    let q = f32(i32(low | (high << 4u)) - 32);
    return half_at(b + 208u) * signed_byte(byte_at(b + 192u + j / 16u)) * q;
}
