//! From the model's token vectors to one unit vector per text: the attention-masked mean
//! (the sentence-transformers recipe for these models), then L2 normalisation, in the same
//! order of float operations as fastembed 7.7 (so vectors did not move when we left it).

use crate::error::{Error, Result};

/// Mean of the first `real` token vectors of one row (`len` tokens of `dim` floats), summed
/// in token order in f32 as fastembed's `sum_axis` did, then normalised twice: fastembed's
/// f32 `v / (norm + 1e-12)`, then ours in f64, so a vector is unit-norm to f32 precision.
/// A zero or non-finite vector is an error, never returned.
pub fn mean_unit(row: &[f32], real: usize, dim: usize, index: usize) -> Result<Vec<f32>> {
    if dim == 0 || !row.len().is_multiple_of(dim) || real == 0 || real * dim > row.len() {
        return Err(Error::model(format!(
            "text {index}: a model output of {} floats cannot hold {real} token(s) of {dim} dimensions",
            row.len()
        )));
    }
    let mut v = vec![0f32; dim];
    for token in row[..real * dim].chunks_exact(dim) {
        for (s, &x) in v.iter_mut().zip(token) {
            *s += x;
        }
    }
    let count = real as f32;
    for s in &mut v {
        *s /= count;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    for s in &mut v {
        *s /= norm + 1e-12;
    }
    unit(v, index)
}

/// Renormalises in f64, so a vector is unit-norm to f32 precision. A zero or non-finite
/// vector is an error.
pub fn unit(mut v: Vec<f32>, index: usize) -> Result<Vec<f32>> {
    let norm = v.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt();
    if !norm.is_finite() || norm < 1e-6 {
        return Err(Error::model(format!("text {index}: the model produced a degenerate vector (norm {norm})")));
    }
    for x in &mut v {
        *x = (f64::from(*x) / norm) as f32;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_ignores_padding_and_is_unit() {
        // Two real tokens, one padding token that would flip the direction if counted.
        let row = [1.0, 0.0, 3.0, 0.0, -100.0, 5.0];
        let v = mean_unit(&row, 2, 2, 0).unwrap();
        assert!((v[0] - 1.0).abs() < 1e-6 && v[1].abs() < 1e-6, "{v:?}");
    }

    #[test]
    fn degenerate_and_misshaped_outputs_are_errors() {
        assert!(mean_unit(&[0.0; 4], 2, 2, 0).is_err());
        assert!(mean_unit(&[1.0; 5], 2, 2, 0).is_err());
        assert!(mean_unit(&[1.0; 4], 3, 2, 0).is_err());
        assert!(mean_unit(&[1.0; 4], 0, 2, 0).is_err());
        assert!(unit(vec![f32::NAN, 1.0], 0).is_err());
    }
}
