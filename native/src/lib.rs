//! codesearch._native: the Python bindings (thin) over the core modules.

pub mod budget;
pub mod error;
pub mod rrf;
pub mod tokens;
pub mod trigram;

#[cfg(feature = "python")]
mod bindings {
    use std::path::PathBuf;

    use pyo3::exceptions::{PyInterruptedError, PyTimeoutError, PyValueError};
    use pyo3::prelude::*;
    use pyo3::pybacked::PyBackedBytes;
    use pyo3::types::{PyBytes, PyFloat, PyList, PyString, PyTuple};

    use std::time::Duration;

    use crate::budget::{Budget, CancelFlag};
    use crate::error::Error;
    use crate::trigram::{self, SearchRequest};

    impl From<Error> for PyErr {
        fn from(e: Error) -> PyErr {
            match e {
                Error::Io(io) => io.into(),
                Error::Timeout(m) => PyTimeoutError::new_err(m),
                Error::Cancelled(m) => PyInterruptedError::new_err(m),
                other => PyValueError::new_err(other.to_string()),
            }
        }
    }

    /// One matching line.
    #[pyclass(name = "GrepMatch", module = "codesearch._native", frozen, get_all)]
    pub struct GrepMatch {
        path: String,
        line: u32,
        text: String,
        score: f64,
        match_count: u32,
        whole_word: bool,
        definition_line: bool,
    }

    #[pymethods]
    impl GrepMatch {
        fn __repr__(&self) -> String {
            format!(
                "GrepMatch({:?}:{} score={:.3} {:?})",
                self.path, self.line, self.score, self.text
            )
        }
    }

    #[pyclass(name = "GrepResult", module = "codesearch._native", frozen, get_all)]
    pub struct GrepResult {
        matches: Py<PyList>,
        candidate_files: usize,
        total_files: usize,
        full_scan: bool,
    }

    /// Stops native calls it is passed to: `cancel()` from any thread (the GIL is not needed to see it).
    #[pyclass(name = "CancelToken", module = "codesearch._native", frozen)]
    #[derive(Default)]
    pub struct CancelToken(CancelFlag);

    #[pymethods]
    impl CancelToken {
        #[new]
        fn new() -> CancelToken {
            CancelToken::default()
        }

        fn cancel(&self) {
            self.0.cancel();
        }

        #[getter]
        fn cancelled(&self) -> bool {
            self.0.is_cancelled()
        }
    }

    /// A per-repository trigram index on disk: postings (trigram -> file ids) plus a content store.
    #[pyclass(name = "TrigramIndex", module = "codesearch._native", frozen)]
    pub struct TrigramIndex(trigram::TrigramIndex);

    #[pymethods]
    impl TrigramIndex {
        #[staticmethod]
        #[pyo3(signature = (dir, files, base=None, drop=None))]
        fn build(
            py: Python<'_>,
            dir: PathBuf,
            files: Vec<(String, PyBackedBytes)>,
            base: Option<Bound<'_, TrigramIndex>>,
            drop: Option<Vec<String>>,
        ) -> PyResult<TrigramIndex> {
            let base = base.as_ref().map(|b| &b.get().0);
            let drop = drop.unwrap_or_default();
            let files: Vec<(String, &[u8])> =
                files.iter().map(|(p, d)| (p.clone(), d.as_ref())).collect();
            let index = py.detach(|| trigram::TrigramIndex::build(&dir, &files, base, &drop))?;
            Ok(TrigramIndex(index))
        }

        #[staticmethod]
        fn open(py: Python<'_>, dir: PathBuf) -> PyResult<TrigramIndex> {
            Ok(TrigramIndex(
                py.detach(|| trigram::TrigramIndex::open(&dir))?,
            ))
        }

        fn num_files(&self) -> usize {
            self.0.num_files()
        }

        fn paths(&self) -> Vec<String> {
            self.0.paths().to_vec()
        }

        fn content<'py>(&self, py: Python<'py>, path: &str) -> Option<Bound<'py, PyBytes>> {
            self.0.content(path).map(|d| PyBytes::new(py, d))
        }

        /// Lines `first..=last` (1-based) of a stored file: a chunk's text without a second copy of it.
        fn lines<'py>(
            &self,
            py: Python<'py>,
            path: &str,
            first: u32,
            last: u32,
        ) -> Option<Bound<'py, PyBytes>> {
            self.0.lines(path, first, last).map(|d| PyBytes::new(py, d))
        }

        #[pyo3(signature = (pattern, is_regex, case_sensitive, limit, allowed=None, timeout_s=None, cancel=None))]
        #[allow(clippy::too_many_arguments)]
        fn search(
            &self,
            py: Python<'_>,
            pattern: &str,
            is_regex: bool,
            case_sensitive: bool,
            limit: usize,
            allowed: Option<Vec<u32>>,
            timeout_s: Option<f64>,
            cancel: Option<Bound<'_, CancelToken>>,
        ) -> PyResult<GrepResult> {
            let timeout = match timeout_s {
                Some(t) if t.is_finite() => Some(Duration::from_secs_f64(t.max(0.0))),
                Some(_) => return Err(PyValueError::new_err("timeout_s must be finite")),
                None => None,
            };
            let budget = Budget::new(timeout, cancel.map(|c| c.get().0.clone()));
            let req = SearchRequest {
                pattern,
                is_regex,
                case_sensitive,
                limit,
                allowed: allowed.as_deref(),
            };
            let result = py.detach(|| self.0.search_within(&req, &budget))?;
            let matches = result.matches.into_iter().map(|m| GrepMatch {
                path: m.path,
                line: m.line,
                text: m.text,
                score: m.score,
                match_count: m.match_count,
                whole_word: m.whole_word,
                definition_line: m.definition_line,
            });
            let matches = PyList::new(
                py,
                matches
                    .map(|m| Py::new(py, m))
                    .collect::<PyResult<Vec<_>>>()?,
            )?;
            Ok(GrepResult {
                matches: matches.unbind(),
                candidate_files: result.candidate_files,
                total_files: result.total_files,
                full_scan: result.full_scan,
            })
        }

        fn postings_bytes(&self) -> u64 {
            self.0.postings_bytes()
        }

        fn content_bytes(&self) -> u64 {
            self.0.content_bytes()
        }

        fn __repr__(&self) -> String {
            format!(
                "TrigramIndex({:?}, files={})",
                self.0.dir(),
                self.0.num_files()
            )
        }
    }

    /// Weighted reciprocal rank fusion; see native/src/rrf.rs.
    #[pyfunction]
    fn fuse<'py>(
        py: Python<'py>,
        lists: Vec<Vec<Bound<'py, PyString>>>,
        weights: Vec<f64>,
        k: f64,
    ) -> PyResult<Bound<'py, PyList>> {
        let strs: Vec<Vec<&str>> = lists
            .iter()
            .map(|l| l.iter().map(|s| s.to_str()).collect::<PyResult<Vec<_>>>())
            .collect::<PyResult<_>>()?;
        let fused = crate::rrf::fuse(&strs, &weights, k).map_err(PyValueError::new_err)?;
        let items = fused.items.iter().map(|f| {
            let id = lists[f.first.0][f.first.1].clone().into_any();
            let ranks = PyList::new(py, fused.ranks(f))?.into_any();
            PyTuple::new(py, [id, PyFloat::new(py, f.score).into_any(), ranks])
        });
        PyList::new(py, items.collect::<PyResult<Vec<_>>>()?)
    }

    /// Below this many list entries in all, fusion takes microseconds: releasing the GIL would cost more, and
    /// on the event loop thread getting it back can wait a whole switch interval (5 ms) behind a busy thread.
    const DETACH_MIN_ENTRIES: usize = 100_000;

    /// Weighted reciprocal rank fusion with a compact result: (ids best first, scores, ranks as a flat
    /// little-endian int32 table of len(ids) * len(lists)); see native/src/rrf.rs and _native.pyi.
    #[pyfunction]
    #[allow(clippy::type_complexity)]
    fn fuse_compact<'py>(
        py: Python<'py>,
        lists: Vec<Vec<Bound<'py, PyString>>>,
        weights: Vec<f64>,
        k: f64,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyBytes>)> {
        // Borrowed UTF-8 views of str objects `lists` keeps alive; str is immutable, so they stay valid
        // while the GIL is released.
        let strs: Vec<Vec<&str>> = lists
            .iter()
            .map(|l| l.iter().map(|s| s.to_str()).collect::<PyResult<Vec<_>>>())
            .collect::<PyResult<_>>()?;
        let run = || {
            let fused = crate::rrf::fuse(&strs, &weights, k)?;
            let ranks = fused.ranks_le_i32();
            Ok::<_, String>((fused, ranks))
        };
        let entries: usize = strs.iter().map(Vec::len).sum();
        let result = if entries >= DETACH_MIN_ENTRIES {
            py.detach(run)
        } else {
            run()
        };
        let (fused, ranks) = result.map_err(PyValueError::new_err)?;
        let ids = PyList::new(
            py,
            fused
                .items
                .iter()
                .map(|f| lists[f.first.0][f.first.1].clone()),
        )?;
        let scores = PyList::new(py, fused.items.iter().map(|f| f.score))?;
        Ok((ids, scores, PyBytes::new(py, &ranks)))
    }

    /// Whether a search for the pattern is narrowed by the index (false: every file is read).
    #[pyfunction]
    fn requires_trigrams(pattern: &str, is_regex: bool, case_sensitive: bool) -> PyResult<bool> {
        Ok(trigram::requires_trigrams(
            pattern,
            is_regex,
            case_sensitive,
        )?)
    }

    #[pyfunction]
    fn code_tokens(text: &str) -> Vec<String> {
        crate::tokens::code_tokens(text)
    }

    #[pyfunction]
    fn code_tokens_joined(py: Python<'_>, texts: Vec<String>) -> Vec<String> {
        py.detach(|| crate::tokens::code_tokens_joined(&texts))
    }

    #[pymodule]
    fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_class::<TrigramIndex>()?;
        m.add_class::<CancelToken>()?;
        m.add_class::<GrepMatch>()?;
        m.add_class::<GrepResult>()?;
        m.add_function(wrap_pyfunction!(fuse, m)?)?;
        m.add_function(wrap_pyfunction!(fuse_compact, m)?)?;
        m.add_function(wrap_pyfunction!(code_tokens, m)?)?;
        m.add_function(wrap_pyfunction!(requires_trigrams, m)?)?;
        m.add_function(wrap_pyfunction!(code_tokens_joined, m)?)?;
        Ok(())
    }
}
