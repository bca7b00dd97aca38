//! int8 vector codes: how a unit vector is quantised (one scale per vector), and the dot
//! products the matrix scans with.
//!
//! Why int8: an f32 vector of all-MiniLM-L6-v2 is 1,536 bytes; as 384 codes and one scale it is
//! 388. The stored record shrinks 4× and, more to the point, stops spilling into SQLite
//! overflow pages (a `WITHOUT ROWID` row of 1.6 kB did: ~4.6 kB on disk per vector), the
//! in-memory matrix shrinks 4×, and a full scan reads 4× fewer bytes, which is what bounds
//! it. The cosine error is ~1e-3 at most (one code step of the largest component), far below
//! the gaps the dense ranking depends on (BENCHMARKS.md measures the top-300 overlap).

/// Largest code magnitude: symmetric, so 0.0 maps to 0 and −x to −code(x).
const CODE_MAX: f32 = 127.0;

/// Largest magnitude of the query's 16-bit codes. 2^14 keeps the integer dot product of a
/// scan inside an i32 for any dimension up to [`MAX_INT_DIM`]: |code| × |query code| ≤
/// 127 × 16,384 ≈ 2.1 M per component.
const QUERY_MAX: f32 = 16_384.0;

/// Dimensions up to this use the integer scan (no i32 overflow, see [`QUERY_MAX`]); larger
/// ones fall back to converting codes to f32.
const MAX_INT_DIM: usize = 1_000;

/// Quantise `v` into `out` (cleared first); returns the scale: `v[i] ≈ out[i] × scale`.
/// A zero or non-finite vector gets scale 0 and zero codes (it matches nothing).
pub fn quantise_into(v: &[f32], out: &mut Vec<i8>) -> f32 {
    out.clear();
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    // `f32::max` skips NaN, so non-finite components are looked for separately.
    if max == 0.0 || !max.is_finite() || v.iter().any(|x| !x.is_finite()) {
        out.resize(v.len(), 0);
        return 0.0;
    }
    let scale = max / CODE_MAX;
    out.extend(v.iter().map(|x| (x / scale).round().clamp(-CODE_MAX, CODE_MAX) as i8));
    scale
}

/// `v` quantised: (scale, codes).
pub fn quantise(v: &[f32]) -> (f32, Vec<i8>) {
    let mut codes = Vec::with_capacity(v.len());
    let scale = quantise_into(v, &mut codes);
    (scale, codes)
}

/// Dot product of a code row (times its scale) with an f32 vector: the path for a single
/// lookup, where preparing an integer query would cost more than it saves.
pub fn dot_codes_f32(codes: &[i8], scale: f32, q: &[f32]) -> f32 {
    let (ca, cb) = (codes.chunks_exact(8), q.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(&x, y)| f32::from(x) * y).sum();
    // Eight independent accumulators, so the compiler keeps them in vector registers.
    let mut acc = [0.0f32; 8];
    for (x, y) in ca.zip(cb) {
        for ((s, &x), y) in acc.iter_mut().zip(x).zip(y) {
            *s += f32::from(x) * y;
        }
    }
    (acc.iter().sum::<f32>() + tail) * scale
}

/// A query prepared for scanning: its 16-bit codes and their scale.
pub struct ScanQuery {
    codes: Vec<i16>,
    scale: f32,
    f32s: Vec<f32>,
}

impl ScanQuery {
    /// Prepare `q` (any norm).
    pub fn new(q: &[f32]) -> ScanQuery {
        let max = q.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        if max == 0.0 || !max.is_finite() || q.iter().any(|x| !x.is_finite()) || q.len() > MAX_INT_DIM {
            return ScanQuery { codes: Vec::new(), scale: 0.0, f32s: q.to_vec() };
        }
        let scale = max / QUERY_MAX;
        let codes = q.iter().map(|x| (x / scale).round() as i16).collect();
        ScanQuery { codes, scale, f32s: q.to_vec() }
    }

    /// The dot product of every row of `codes` (rows of `dim`, one scale each) with the query,
    /// appended to `out`.
    pub fn scan(&self, dim: usize, codes: &[i8], scales: &[f32], out: &mut Vec<f32>) {
        if dim == 0 {
            return;
        }
        if self.codes.len() != dim {
            // Too wide for the integer path (or a zero query): exact f32 over the codes.
            out.extend(codes.chunks_exact(dim).zip(scales).map(|(row, &s)| dot_codes_f32(row, s, &self.f32s)));
            return;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                unsafe { scan_avx2(&self.codes, self.scale, dim, codes, scales, out) };
                return;
            }
        }
        scan_rows(&self.codes, self.scale, dim, codes, scales, out);
    }
}

/// The integer scan: `Σ code × query code` in i32 per row, then one multiply by both scales.
/// Written plainly so the compiler vectorises it (sign-extend to i16, multiply-add pairs).
#[inline(always)]
fn scan_rows(q: &[i16], q_scale: f32, dim: usize, codes: &[i8], scales: &[f32], out: &mut Vec<f32>) {
    out.reserve(scales.len());
    for (row, &s) in codes.chunks_exact(dim).zip(scales) {
        let dot: i32 = row.iter().zip(q).map(|(&a, &b)| i32::from(a) * i32::from(b)).sum();
        out.push(dot as f32 * s * q_scale);
    }
}

/// [`scan_rows`] compiled for AVX2 (the default x86-64 target stops at SSE2): about 2× faster
/// on the 100k-row scan.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_avx2(q: &[i16], q_scale: f32, dim: usize, codes: &[i8], scales: &[f32], out: &mut Vec<f32>) {
    scan_rows(q, q_scale, dim, codes, scales, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    proptest! {
        /// Quantised dot products stay within a code step of the exact ones, through both the
        /// single-lookup path and the scan, for unit vectors of the model's dimension.
        #[test]
        fn quantised_dots_are_close_to_exact(
            a in proptest::collection::vec(-1.0f32..1.0, 384),
            b in proptest::collection::vec(-1.0f32..1.0, 384),
        ) {
            prop_assume!(a.iter().any(|x| x.abs() > 1e-3) && b.iter().any(|x| x.abs() > 1e-3));
            let (a, b) = (unit(&a), unit(&b));
            let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let (scale, codes) = quantise(&a);
            let one = dot_codes_f32(&codes, scale, &b);
            let mut scanned = Vec::new();
            ScanQuery::new(&b).scan(384, &codes, &[scale], &mut scanned);
            prop_assert!((one - exact).abs() < 5e-3, "lookup {one} vs {exact}");
            prop_assert!((scanned[0] - exact).abs() < 5e-3, "scan {} vs {exact}", scanned[0]);
            prop_assert!((scanned[0] - one).abs() < 1e-3);
        }
    }

    #[test]
    fn zero_and_wide_vectors_are_safe() {
        let (scale, codes) = quantise(&[0.0; 4]);
        assert_eq!((scale, codes), (0.0, vec![0; 4]));
        let (s, c) = quantise(&[f32::NAN, 1.0]);
        assert_eq!(s, 0.0, "a non-finite vector matches nothing");
        assert_eq!(c, vec![0, 0]);
        // Wider than the integer path: exact f32 over the codes.
        let v = unit(&vec![1.0; 1500]);
        let (s, c) = quantise(&v);
        let mut out = Vec::new();
        ScanQuery::new(&v).scan(1500, &c, &[s], &mut out);
        assert!((out[0] - 1.0).abs() < 1e-3, "{}", out[0]);
    }
}
