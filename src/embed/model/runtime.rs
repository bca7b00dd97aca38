//! ONNX Runtime: the shared library loaded once per process, its one environment, and the
//! session options that bound an embedding call's memory.
//!
//! Why these options (measured in BENCHMARKS.md, "Model footprint"): with ONNX Runtime's
//! defaults, the CPU arena keeps every buffer it ever grew to (a 256-token batch's attention
//! scores, ~100 MB each, stay reserved for the life of the session) and the memory-pattern
//! planner keeps one pre-planned block per input shape it has seen; a store import that meets
//! every batch length from 3 to 256 tokens ended near 1.6 GB. Off, each call allocates what it
//! needs from the system allocator and gives it back when it returns.

use crate::error::{Error, Result, panic_message};
use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use std::panic::catch_unwind;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How a session runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionOptions {
    /// Intra-op threads.
    pub threads: usize,
    /// ONNX Runtime logs only fatal errors (every failure still comes back as an error value):
    /// the reranker's vocabulary probe fails on purpose with a foreign tokenizer, and a
    /// library does not print.
    pub quiet: bool,
}

/// Loads the ONNX Runtime library once per process and builds the process's one environment.
/// `ort` keeps the first library it loads; a failure is remembered so that later loads report
/// it instead of letting `ort` fall back to searching the system for a library (which panics
/// when there is none). Returns the library in use (the first one loaded in this process).
pub fn init(library: &Path) -> Result<(PathBuf, Environment)> {
    static ORT: OnceLock<std::result::Result<(PathBuf, Environment), String>> = OnceLock::new();
    let outcome = ORT.get_or_init(|| {
        let absolute = std::path::absolute(library).unwrap_or_else(|_| library.to_path_buf());
        let built = catch_unwind(|| ort::init_from(&absolute).map_err(|e| e.to_string())?.build().map_err(|e| e.to_string()));
        match built {
            Ok(Ok(env)) => Ok((absolute, env)),
            Ok(Err(e)) => Err(format!(
                "cannot load ONNX Runtime from {}: {e} (memtree needs ONNX Runtime >= 1.{}; run scripts/fetch-models.sh)",
                absolute.display(),
                ort::MINOR_VERSION
            )),
            Err(p) => Err(format!("loading ONNX Runtime from {} panicked: {}", absolute.display(), panic_message(&*p))),
        }
    });
    match outcome {
        Ok((path, env)) => Ok((path.clone(), env.clone())),
        Err(what) => Err(Error::model(what.clone())),
    }
}

/// A session on `model` (read by ONNX Runtime from the file, not copied through our heap)
/// with the CPU arena and memory patterns off, full graph optimisation, `opts.threads`
/// intra-op threads that do not spin between calls.
pub fn session(env: &Environment, model: &Path, opts: SessionOptions) -> Result<Session> {
    let fail = |e: ort::Error<ort::session::builder::SessionBuilder>| Error::Model {
        what: format!("cannot set up an ONNX Runtime session for {}", model.display()),
        source: Some(Box::new(ort::Error::<()>::from(e))),
    };
    let mut builder = Session::builder(env)
        .map_err(|e| Error::Model { what: "cannot create an ONNX Runtime session".into(), source: Some(Box::new(e)) })?
        .with_execution_providers([ort::ep::CPU::default().with_arena_allocator(false).build()])
        .map_err(fail)?
        .with_memory_pattern(false)
        .map_err(fail)?
        .with_optimization_level(GraphOptimizationLevel::Level3)
        .map_err(fail)?
        .with_intra_threads(opts.threads)
        .map_err(fail)?
        // ONNX Runtime's pool threads spin for a while after each call, waiting for the next
        // one; on two cores that spinning takes the CPU from the rest of the query (walk after
        // its query embedding ran ~2× slower than the same work without the model).
        .with_intra_op_spinning(false)
        .map_err(fail)?
        .with_inter_op_spinning(false)
        .map_err(fail)?;
    if opts.quiet {
        builder = builder.with_log_level(ort::logging::LogLevel::Fatal).map_err(fail)?;
    }
    builder.commit_from_file(model).map_err(|e| Error::Model {
        what: format!("cannot load {} with ONNX Runtime", model.display()),
        source: Some(Box::new(e)),
    })
}

/// One call of `session` on `batch` (`input_ids`, `attention_mask`, and `token_type_ids` when
/// the graph takes them): the output `output`'s shape and values. The embedder and the
/// cross-encoder each check the shape they expect.
pub fn run(
    session: &mut Session,
    batch: &super::tokens::Batch,
    type_ids: bool,
    output: &str,
) -> std::result::Result<(Vec<i64>, Vec<f32>), ort::Error> {
    use ort::value::TensorRef;
    let shape = [batch.rows, batch.len];
    let ids = TensorRef::from_array_view((shape, &batch.ids[..]))?;
    let mask = TensorRef::from_array_view((shape, &batch.mask[..]))?;
    let outputs = if type_ids {
        let types = TensorRef::from_array_view((shape, &batch.type_ids[..]))?;
        session.run(ort::inputs!["input_ids" => ids, "attention_mask" => mask, "token_type_ids" => types])
    } else {
        session.run(ort::inputs!["input_ids" => ids, "attention_mask" => mask])
    }?;
    let (out_shape, data) = outputs[output].try_extract_tensor::<f32>()?;
    Ok((out_shape.to_vec(), data.to_vec()))
}
