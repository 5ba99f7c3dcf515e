//! `anilist.custom` documents prepared once: callers send a handful of constant documents over
//! and over, so the parse that checks a document and the JSON escaping of its text are done on
//! its first call and shared by the next ones (their body sends the same bytes by reference).
//!
//! Bounded twice: at most [`CAPACITY`] documents (the least recently used one makes room), and
//! only documents up to [`MAX_DOCUMENT_BYTES`], so the cache never holds more than about
//! `2 × CAPACITY × MAX_DOCUMENT_BYTES`. A document that fails its check is not kept: it is
//! checked again, and fails with the same problems, on every call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use anilink_transport::cache::hint::CacheHint;

/// How many distinct documents one endpoint keeps.
pub const CAPACITY: usize = 32;

/// Longer documents are prepared on every call instead of being kept.
pub const MAX_DOCUMENT_BYTES: usize = 16 * 1024;

/// What a call of one custom document needs, computed from the document alone.
#[derive(Debug, PartialEq)]
pub struct PreparedDocument {
    /// `{"query":"<document, escaped>","variables":`: the body before the call's variables.
    pub prefix: Bytes,
    pub is_mutation: bool,
    pub cache_hint: CacheHint,
}

struct Entry {
    prepared: Arc<PreparedDocument>,
    last_used: u64,
}

#[derive(Default)]
struct Entries {
    by_document: HashMap<Box<str>, Entry>,
    /// Increases at every lookup: the entry with the smallest `last_used` is the least recent.
    clock: u64,
}

/// A small least-recently-used map from document text to its preparation.
#[derive(Default)]
pub struct PreparedDocuments {
    entries: Mutex<Entries>,
}

impl PreparedDocuments {
    /// The preparation of `document`: the kept one, or `prepare(document)`, kept when it
    /// succeeds and the document is not too long to keep.
    pub fn get_or_prepare<E>(
        &self,
        document: &str,
        prepare: impl FnOnce(&str) -> Result<PreparedDocument, E>,
    ) -> Result<Arc<PreparedDocument>, E> {
        if let Some(prepared) = self.lookup(document) {
            return Ok(prepared);
        }
        let prepared = Arc::new(prepare(document)?);
        if document.len() <= MAX_DOCUMENT_BYTES {
            self.keep(document, prepared.clone());
        }
        Ok(prepared)
    }

    fn lookup(&self, document: &str) -> Option<Arc<PreparedDocument>> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.clock += 1;
        let now = entries.clock;
        let entry = entries.by_document.get_mut(document)?;
        entry.last_used = now;
        Some(entry.prepared.clone())
    }

    fn keep(&self, document: &str, prepared: Arc<PreparedDocument>) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.by_document.len() >= CAPACITY && !entries.by_document.contains_key(document) {
            let least_recent = entries
                .by_document
                .iter()
                .min_by_key(|(_, entry)| entry.last_used)
                .map(|(document, _)| document.clone());
            if let Some(least_recent) = least_recent {
                entries.by_document.remove(&least_recent);
            }
        }
        let last_used = entries.clock;
        entries.by_document.insert(
            document.into(),
            Entry {
                prepared,
                last_used,
            },
        );
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .by_document
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn prepared(text: &str) -> PreparedDocument {
        PreparedDocument {
            prefix: Bytes::copy_from_slice(text.as_bytes()),
            is_mutation: false,
            cache_hint: CacheHint::None,
        }
    }

    /// Prepares through `documents`, counting the preparations in `runs`.
    fn get(
        documents: &PreparedDocuments,
        document: &str,
        runs: &Cell<u32>,
    ) -> Arc<PreparedDocument> {
        documents
            .get_or_prepare(document, |text| {
                runs.set(runs.get() + 1);
                Ok::<_, ()>(prepared(text))
            })
            .unwrap()
    }

    #[test]
    fn the_same_document_is_prepared_once() {
        let documents = PreparedDocuments::default();
        let runs = Cell::new(0);
        let first = get(&documents, "{ Viewer { id } }", &runs);
        let second = get(&documents, "{ Viewer { id } }", &runs);
        assert_eq!(runs.get(), 1);
        assert!(Arc::ptr_eq(&first, &second));
    }

    #[test]
    fn documents_one_character_apart_are_prepared_apart() {
        let documents = PreparedDocuments::default();
        let runs = Cell::new(0);
        let a = get(&documents, "{ Media(id: 1) { id } }", &runs);
        let b = get(&documents, "{ Media(id: 2) { id } }", &runs);
        assert_eq!(runs.get(), 2);
        assert_eq!(&a.prefix[..], b"{ Media(id: 1) { id } }");
        assert_eq!(&b.prefix[..], b"{ Media(id: 2) { id } }");
    }

    #[test]
    fn a_failing_document_is_prepared_again_every_time() {
        let documents = PreparedDocuments::default();
        let runs = Cell::new(0);
        for _ in 0..3 {
            let error = documents
                .get_or_prepare("{", |_| {
                    runs.set(runs.get() + 1);
                    Err::<PreparedDocument, _>("unbalanced")
                })
                .unwrap_err();
            assert_eq!(error, "unbalanced");
        }
        assert_eq!(runs.get(), 3);
        assert_eq!(documents.len(), 0);
    }

    #[test]
    fn the_bound_holds_and_the_least_recently_used_document_makes_room() {
        let documents = PreparedDocuments::default();
        let runs = Cell::new(0);
        for i in 0..CAPACITY {
            get(&documents, &format!("{{ d{i} }}"), &runs);
        }
        // d0 is used again, so d1 is now the least recent.
        get(&documents, "{ d0 }", &runs);
        get(&documents, "{ extra }", &runs);
        assert_eq!(documents.len(), CAPACITY);
        assert_eq!(runs.get(), CAPACITY as u32 + 1);
        get(&documents, "{ d0 }", &runs);
        assert_eq!(runs.get(), CAPACITY as u32 + 1, "d0 was kept");
        get(&documents, "{ d1 }", &runs);
        assert_eq!(runs.get(), CAPACITY as u32 + 2, "d1 was evicted");
        assert_eq!(documents.len(), CAPACITY);
    }

    #[test]
    fn a_document_too_long_to_keep_is_prepared_every_time() {
        let documents = PreparedDocuments::default();
        let runs = Cell::new(0);
        let long = format!("{{ Viewer {{ id }} }}{}", " ".repeat(MAX_DOCUMENT_BYTES));
        get(&documents, &long, &runs);
        get(&documents, &long, &runs);
        assert_eq!(runs.get(), 2);
        assert_eq!(documents.len(), 0);
    }
}
