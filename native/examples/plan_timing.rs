//! Times the parts of a case-insensitive literal search's setup: cargo run --release --example plan_timing
use std::time::Instant;

use regex_syntax::ParserBuilder;

fn main() {
    for n in [64, 256, 1024] {
        time_one(&"sk".repeat(n));
    }
    time_one(&"Lorem ipsum dolor sit amet, consectetur adipiscing elit ".repeat(20)[..1000]);
}

fn time_one(text: &str) {
    let pattern = regex::escape(text);
    println!("{} characters:", text.len());
    let t = Instant::now();
    let hir = ParserBuilder::new()
        .case_insensitive(true)
        .utf8(false)
        .build()
        .parse(&pattern)
        .unwrap();
    println!("parse {:?}", t.elapsed());
    let t = Instant::now();
    let q = _native::trigram::query::regex_query(&hir);
    println!("plan {:?} ({} nodes)", t.elapsed(), q.size());
    let t = Instant::now();
    let _re = regex::bytes::RegexBuilder::new(&pattern)
        .case_insensitive(true)
        .size_limit(16 << 20)
        .build()
        .unwrap();
    println!("compile {:?}", t.elapsed());
}
