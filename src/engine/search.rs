//! Tool search: BM25 ranking over tool names and descriptions, for tool sets too large to
//! send to the model whole. The index is built once per registry generation (a few ms for
//! 10,000 tools) and a query touches only the postings of its terms.
//!
//! Tokens: lowercase alphanumeric runs, split at `_`, `-`, `.`, `/` and camelCase humps,
//! with a plain English plural `s` dropped. Name tokens count [`NAME_BOOST`] times, so a
//! tool named after the query outranks one that only mentions it; a query equal to a tool's
//! whole name puts that tool first.

use std::collections::HashMap;

/// BM25 term-frequency saturation.
const K1: f32 = 1.2;
/// BM25 length normalisation.
const B: f32 = 0.75;
/// How many times a token of the name counts against one of the description.
const NAME_BOOST: f32 = 3.0;

pub struct SearchIndex {
    names: Vec<String>,
    vocabulary: HashMap<String, u32>,
    /// term → (document, weighted term frequency)
    postings: Vec<Vec<(u32, f32)>>,
    doc_len: Vec<f32>,
    avg_len: f32,
    by_name: HashMap<String, u32>,
}

/// One search hit: the index of the document and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub doc: usize,
    pub score: f32,
}

impl SearchIndex {
    /// Indexes `(name, description)` pairs; hits refer to their position.
    pub fn build<'a>(docs: impl IntoIterator<Item = (&'a str, &'a str)>) -> SearchIndex {
        let mut index = SearchIndex {
            names: Vec::new(),
            vocabulary: HashMap::new(),
            postings: Vec::new(),
            doc_len: Vec::new(),
            avg_len: 0.0,
            by_name: HashMap::new(),
        };
        let mut counts: HashMap<u32, f32> = HashMap::new();
        let mut tokens = Vec::new();
        for (doc, (name, description)) in docs.into_iter().enumerate() {
            counts.clear();
            let mut len = 0.0;
            for (text, weight) in [(name, NAME_BOOST), (description, 1.0)] {
                tokens.clear();
                tokenize(text, &mut tokens);
                for t in tokens.drain(..) {
                    let next = index.vocabulary.len() as u32;
                    let id = *index.vocabulary.entry(t).or_insert(next);
                    if id as usize == index.postings.len() {
                        index.postings.push(Vec::new());
                    }
                    *counts.entry(id).or_default() += weight;
                    len += weight;
                }
            }
            for (term, tf) in &counts {
                index.postings[*term as usize].push((doc as u32, *tf));
            }
            index.doc_len.push(len);
            index.by_name.insert(name.to_ascii_lowercase(), doc as u32);
            index.names.push(name.to_string());
        }
        let n = index.doc_len.len().max(1) as f32;
        index.avg_len = (index.doc_len.iter().sum::<f32>() / n).max(1.0);
        index
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn name(&self, doc: usize) -> &str {
        &self.names[doc]
    }

    /// The best `limit` documents for `query`, best first (ties by position).
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let n = self.names.len() as f32;
        // Dense scores: a query term common to every tool touches every document, and a
        // flat array beats a map there.
        let mut scores = vec![0f32; self.names.len()];
        let mut any = false;
        let mut terms = Vec::new();
        tokenize(query, &mut terms);
        terms.sort_unstable();
        terms.dedup();
        for t in &terms {
            let Some(id) = self.vocabulary.get(t) else {
                continue;
            };
            let postings = &self.postings[*id as usize];
            let df = postings.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            let norm = K1 / self.avg_len;
            for (doc, tf) in postings {
                let dl = self.doc_len[*doc as usize];
                scores[*doc as usize] +=
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B) + norm * B * dl);
                any = true;
            }
        }
        if let Some(doc) = self.by_name.get(&query.trim().to_ascii_lowercase()) {
            scores[*doc as usize] += 1_000.0;
            any = true;
        }
        if !any || limit == 0 {
            return Vec::new();
        }
        // Keep the best `limit` in a small sorted buffer (limit is tiny).
        let better = |a: &Hit, b: &Hit| a.score > b.score || (a.score == b.score && a.doc < b.doc);
        let mut top: Vec<Hit> = Vec::with_capacity(limit + 1);
        for (doc, score) in scores.into_iter().enumerate() {
            if score <= 0.0 {
                continue;
            }
            let hit = Hit { doc, score };
            if top.len() == limit && !better(&hit, &top[limit - 1]) {
                continue;
            }
            let pos = top
                .iter()
                .position(|h| better(&hit, h))
                .unwrap_or(top.len());
            top.insert(pos, hit);
            top.truncate(limit);
        }
        top
    }
}

/// Splits text into lowercase search tokens.
pub fn tokenize(text: &str, out: &mut Vec<String>) {
    let mut word = String::new();
    let mut prev_lower = false;
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if word.is_empty() {
            return;
        }
        let mut w = std::mem::take(word);
        if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
            w.pop();
        }
        out.push(w);
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower {
                flush(&mut word, out);
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        } else {
            flush(&mut word, out);
            prev_lower = false;
        }
    }
    flush(&mut word, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let mut t = Vec::new();
        tokenize("mcp__fs__readFile: Reads files.", &mut t);
        assert_eq!(t, ["mcp", "fs", "read", "file", "read", "file"]);
    }

    #[test]
    fn names_outrank_mentions_and_exact_names_come_first() {
        let idx = SearchIndex::build([
            ("mcp__a__list_files", "Lists the files of a folder."),
            (
                "mcp__a__weather",
                "Current weather; unlike list_files it reads no files.",
            ),
            ("mcp__a__read_file", "Reads one file."),
            ("mcp__b__weather", "Forecast."),
        ]);
        let hits: Vec<&str> = idx
            .search("list files", 10)
            .iter()
            .map(|h| idx.name(h.doc))
            .collect();
        assert_eq!(hits[0], "mcp__a__list_files");
        let hits: Vec<&str> = idx
            .search("mcp__b__weather", 1)
            .iter()
            .map(|h| idx.name(h.doc))
            .collect();
        assert_eq!(hits, ["mcp__b__weather"]);
        assert!(idx.search("nothing-matches-zzz", 5).is_empty());
    }
}
