//! `half`: IEEE half precision, the scales' format: to and from f32, and a block's
//! scale read in place.

/// IEEE half to single precision (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = (u32::from(h) & 0x8000) << 16;
    let exp = u32::from(h >> 10) & 0x1f;
    let mant = u32::from(h) & 0x3ff;
    match exp {
        0 => {
            // Zero or subnormal: mant × 2⁻²⁴, exact in f32.
            let v = mant as f32 * (1.0 / 16_777_216.0);
            if sign != 0 { -v } else { v }
        }
        31 => f32::from_bits(sign | 0x7f80_0000 | (mant << 13)),
        _ => f32::from_bits(sign | ((exp + 112) << 23) | (mant << 13)),
    }
}

/// Single to half precision, rounding to nearest even (as ggml's conversion does).
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let mant = b & 0x7f_ffff;
    if exp == 255 {
        return sign | 0x7c00 | if mant != 0 { 0x200 } else { 0 };
    }
    let e = exp - 112;
    if e >= 31 {
        return sign | 0x7c00;
    }
    let (half, rem, mid) = if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = mant | 0x80_0000;
        let shift = (14 - e) as u32;
        (m >> shift, m & ((1 << shift) - 1), 1u32 << (shift - 1))
    } else {
        (((e as u32) << 10) | (mant >> 13), mant & 0x1fff, 0x1000)
    };
    // A carry out of the mantissa correctly bumps the exponent (up to infinity).
    let rounded = if rem > mid || (rem == mid && half & 1 == 1) {
        half + 1
    } else {
        half
    };
    sign | rounded as u16
}

/// A block's f16 scale, without branches: the half's exponent and mantissa shifted
/// into place and rebased by 2¹¹² (exact for normal and subnormal halves; a weight
/// scale is never infinite or NaN, which this would read as a large finite value).
#[inline(always)]
pub(super) fn f16_at(bytes: &[u8], at: usize) -> f32 {
    match bytes.get(at..at + 2) {
        Some(&[lo, hi]) => {
            let h = u32::from(u16::from_le_bytes([lo, hi]));
            let magnitude = f32::from_bits((h & 0x7fff) << 13) * f32::from_bits(0x7780_0000);
            f32::from_bits(magnitude.to_bits() | ((h & 0x8000) << 16))
        }
        _ => 0.0,
    }
}
