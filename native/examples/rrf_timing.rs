//! Times the core RRF without Python: `cargo run --release --example rrf_timing --no-default-features`.
fn main() {
    let pool: Vec<String> = (0..2500)
        .map(|i| format!("pkg/module_{}.py:{}", i / 7, i * 13 % 997))
        .collect();
    let lists: Vec<Vec<&str>> = (0..4)
        .map(|j| {
            (0..1000)
                .map(|i| pool[(i * 7 + j * 311) % 2500].as_str())
                .collect()
        })
        .collect();
    let start = std::time::Instant::now();
    for _ in 0..100 {
        let out = _native::rrf::fuse(&lists, &[1.0, 0.8, 1.2, 0.5], 60.0).unwrap();
        std::hint::black_box(out);
    }
    println!("fuse 4x1000: {:?} per call", start.elapsed() / 100);
}
