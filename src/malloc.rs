//! glibc's malloc set for a process that imports with the model: memory it frees goes back to
//! the system instead of staying in the process (issue 28: an import within 400 MB).
//!
//! Two defaults of glibc keep freed memory resident. Every thread that allocates (ONNX
//! Runtime's pool, the tokenizer's rayon threads) gets an arena of its own, and what is freed
//! there stays there: a 173-note import peaked at 470 MB RSS with 219 MB of live heap, 285 MB
//! with two arenas. And the mmap threshold is dynamic: once a large block (a 50 MB message, a
//! tokenizer's batch) is freed, blocks up to 32 MiB come from the heap instead of `mmap`, and
//! the heap is only trimmed from its top, so a long import's RSS grows far past its live heap
//! (a 12 MB message with the model: 342 MiB, 258 MiB with the threshold fixed at 4 MiB; heaptrack's
//! live peak 219 MB, all but 14 MB of it ONNX Runtime's model load). A fixed threshold of
//! 4 MiB costs no embedding speed (ONNX Runtime's activations for a 512-token call stay on the
//! heap); 1 MiB cost a fifth of the vectors per second on long messages (BENCHMARKS.md,
//! "Model footprint").

/// Sets glibc's malloc for a long import: two arenas, blocks of 4 MiB or more from `mmap`
/// (returned on free), the heap trimmed past 128 KiB free at its top. Call it first thing in
/// `main`, before any thread starts; the `memtree` binary does. A no-op where the C library is
/// not glibc. A host with its own allocator (jemalloc, mimalloc) does not need it.
pub fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it takes glibc's own locks.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 10);
    }
}
