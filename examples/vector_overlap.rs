//! How much the int8 vector codes change the dense ranking: the overlap of each question's
//! dense top-k (leaves) over the codes with the top-k over the exact f32 vectors.
//!
//! ```sh
//! scripts/fetch-models.sh
//! cargo run --release --example vector_overlap -- QUESTIONS.txt STORE_DB... [--k 300]
//! ```
//!
//! Each `STORE_DB` is the `memtree.db` of a store written before the codes (schema 2, whose
//! `vectors` table still holds f32 blobs; opening it with this build would convert them), read
//! directly with SQLite. `QUESTIONS.txt` holds one question per line; every question is asked
//! of every store. Prints, per store and overall, the mean and minimum overlap |exact ∩
//! codes| / k and the largest cosine error.

use memtree::{Embedder, FastEmbedder, ModelPaths, Rows, VectorMatrix};
use rusqlite::{Connection, OpenFlags};
use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut k = 300usize;
    if let Some(i) = args.iter().position(|a| a == "--k") {
        k = args.get(i + 1).ok_or("--k needs a number")?.parse()?;
        args.drain(i..i + 2);
    }
    let (questions, stores) = args.split_first().ok_or("usage: vector_overlap QUESTIONS.txt STORE_DB... [--k N]")?;
    let questions: Vec<String> = std::fs::read_to_string(questions)?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    let paths = ModelPaths::discover().ok_or("no model files: run scripts/fetch-models.sh")?;
    let model = FastEmbedder::load(&paths)?;
    let refs: Vec<&str> = questions.iter().map(String::as_str).collect();
    let qvecs = model.embed(&refs)?;
    let (mut all, mut worst_all, mut err_all) = (Vec::new(), 1.0f64, 0.0f32);
    for db in stores {
        let (ids, exact) = read_f32(db)?;
        let mut m = VectorMatrix::new(model.dim());
        for (id, v) in ids.iter().zip(&exact) {
            m.upsert(id, v);
        }
        let leaves: Vec<usize> = (0..ids.len()).filter(|&i| ids[i].starts_with('L')).collect();
        let kk = k.min(leaves.len());
        let (mut sum, mut worst, mut err) = (0.0f64, 1.0f64, 0.0f32);
        for q in &qvecs {
            let mut truth: Vec<(usize, f32)> =
                leaves.iter().map(|&i| (i, exact[i].iter().zip(q).map(|(a, b)| a * b).sum::<f32>())).collect();
            truth.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| ids[a.0].cmp(&ids[b.0])));
            truth.truncate(kk);
            let got = m.top_k(q, kk, Rows::Leaves);
            let want: std::collections::HashSet<&str> = truth.iter().map(|(i, _)| ids[*i].as_str()).collect();
            let hit = got.iter().filter(|(id, _)| want.contains(id.as_str())).count();
            let o = hit as f64 / kk.max(1) as f64;
            for (i, c) in &truth {
                err = err.max((m.cosine(q, &ids[*i]).unwrap_or(0.0) - c).abs());
            }
            sum += o;
            worst = worst.min(o);
            all.push(o);
        }
        println!(
            "{db}: {} vectors ({} leaves), {} questions, top-{kk} overlap mean {:.4} min {:.4}, max |cosine error| {:.5}",
            ids.len(),
            leaves.len(),
            qvecs.len(),
            sum / qvecs.len().max(1) as f64,
            worst,
            err
        );
        worst_all = worst_all.min(worst);
        err_all = err_all.max(err);
    }
    println!(
        "all: {} (store, question) pairs, overlap mean {:.4} min {:.4}, max |cosine error| {:.5}",
        all.len(),
        all.iter().sum::<f64>() / all.len().max(1) as f64,
        worst_all,
        err_all
    );
    Ok(())
}

/// Node ids and their f32 vectors, in id order.
type Exact = (Vec<String>, Vec<Vec<f32>>);

/// The f32 vectors of a schema-2 store.
fn read_f32(db: &str) -> Result<Exact, Box<dyn Error>> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = conn.prepare("SELECT node_id, data FROM vectors ORDER BY node_id")?;
    let mut rows = stmt.query([])?;
    let (mut ids, mut vecs) = (Vec::new(), Vec::new());
    while let Some(r) = rows.next()? {
        let data: Vec<u8> = r.get(1).map_err(|_| format!("{db}: not a schema-2 store (no f32 vectors)"))?;
        ids.push(r.get::<_, String>(0)?);
        vecs.push(data.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect());
    }
    Ok((ids, vecs))
}
