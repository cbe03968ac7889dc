//! A local model's weights address, checked before the settings naming it are saved:
//! a missing file, a web page, a tiny file or a file of another kind is refused with
//! what to do instead; GGUF weights pass, and their download is dropped after the
//! first bytes (the worker fetches them itself).
#![allow(clippy::unwrap_used)]

mod common;

use common::{Reply, ScriptedHttp};
use familiar::base::http::HttpError;
use familiar::llm::weights::{Weights, check};
use futures::executor::block_on;

const URL: &str = "http://127.0.0.1:8080/models/m.gguf";

fn serving(
    headers: Vec<(&'static str, &'static str)>,
    chunks: Vec<&[u8]>,
    hang: bool,
) -> ScriptedHttp {
    let http = ScriptedHttp::default();
    http.push(Reply::Respond {
        status: 200,
        headers,
        chunks: chunks.into_iter().map(|c| Ok(c.to_vec())).collect(),
        hang,
    });
    http
}

fn refused(http: &ScriptedHttp) -> String {
    let error = block_on(check(http, URL)).unwrap_err();
    assert!(error.contains("pick a file"), "says what to do: {error}");
    error
}

#[test]
fn gguf_weights_pass_and_their_download_is_dropped_after_the_magic() {
    // The body never ends by itself: a check that read it all would hang.
    let http = serving(
        vec![
            ("content-type", "application/octet-stream"),
            ("content-length", "98362432"),
        ],
        vec![b"GG", b"UF\x03\x00\x00\x00"],
        true,
    );
    let found = block_on(check(&http, URL)).unwrap();
    assert_eq!(
        found,
        Weights {
            bytes: Some(98_362_432)
        }
    );
    assert_eq!(http.bodies_dropped.get(), 1, "the download is aborted");
    let request = &http.requests.borrow()[0];
    assert_eq!((request.method, request.url.as_str()), ("GET", URL));
    assert!(
        request.headers.is_empty(),
        "a bare GET, so a model hub may redirect it"
    );
}

#[test]
fn a_server_that_says_no_size_is_checked_by_the_magic_alone() {
    let http = serving(vec![], vec![b"GGUF", b"rest"], false);
    assert_eq!(
        block_on(check(&http, URL)).unwrap(),
        Weights { bytes: None }
    );
}

#[test]
fn a_missing_file_is_refused_with_what_to_do() {
    let http = ScriptedHttp::default();
    http.reply(404, "Not Found");
    let error = refused(&http);
    assert!(
        error.starts_with(&format!("there is no file at {URL} (HTTP 404)")),
        "{error}"
    );
    assert!(error.contains("scripts/demo.sh --with-model"), "{error}");
}

#[test]
fn other_statuses_say_what_they_are() {
    for (status, words) in [
        (403, "is not open to this page (HTTP 403)"),
        (500, "answered HTTP 500"),
    ] {
        let http = ScriptedHttp::default();
        http.reply(status, "no");
        assert!(refused(&http).contains(words), "{status}");
    }
}

#[test]
fn a_web_page_is_not_weights() {
    // A dev server answers an unknown path with its index page, status 200.
    let http = serving(
        vec![("content-type", "Text/HTML; charset=utf-8")],
        vec![b"<!doctype html>"],
        false,
    );
    assert!(refused(&http).contains("is a web page, not a GGUF file"));
}

#[test]
fn a_tiny_file_is_not_weights() {
    let http = serving(vec![("content-length", "1024")], vec![b"GGUF"], false);
    assert!(refused(&http).contains("is 1024 bytes, too small"));
}

#[test]
fn a_file_of_another_kind_says_how_it_starts() {
    for start in [&b"PK\x03\x04zipped"[..], b"{\"a\": 1}", b"GG", b""] {
        let http = serving(vec![("content-length", "5000000")], vec![start], false);
        let error = refused(&http);
        assert!(
            error.contains("is not a GGUF file (it starts with"),
            "{error}"
        );
    }
}

#[test]
fn no_answer_or_a_broken_body_is_refused() {
    let http = ScriptedHttp::default();
    http.push(Reply::Fail(HttpError::Network(
        "no answer from http://127.0.0.1:8080".into(),
    )));
    assert!(refused(&http).contains("could not be fetched: network error: no answer"));
    let http = ScriptedHttp::default();
    http.push(Reply::Respond {
        status: 200,
        headers: vec![],
        chunks: vec![Err(HttpError::Network("reset".into()))],
        hang: false,
    });
    assert!(refused(&http).contains("broke off"));
}
