//! A local model's weights address, checked before the settings naming it are saved,
//! with one HEAD request (nothing downloaded twice): a missing file, a private one, a
//! web page or a tiny file is refused with what to do instead; weights pass, and so
//! does a server that refuses HEAD (the worker's load then checks the file).
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
fn weights_pass_with_their_size_from_one_head_request() {
    let http = serving(
        vec![
            ("content-type", "application/octet-stream"),
            ("content-length", "98362432"),
        ],
        vec![],
        false,
    );
    let found = block_on(check(&http, URL)).unwrap();
    assert_eq!(
        found,
        Weights {
            bytes: Some(98_362_432)
        }
    );
    let request = &http.requests.borrow()[0];
    assert_eq!((request.method, request.url.as_str()), ("HEAD", URL));
    assert!(
        request.headers.is_empty(),
        "a bare request, so a model hub may redirect it"
    );
    assert_eq!(http.requests.borrow().len(), 1);
}

#[test]
fn a_server_that_says_no_size_or_refuses_head_is_left_to_the_worker() {
    let http = serving(vec![], vec![], false);
    assert_eq!(
        block_on(check(&http, URL)).unwrap(),
        Weights { bytes: None }
    );
    for status in [405, 501] {
        let http = ScriptedHttp::default();
        http.reply(status, "");
        assert_eq!(
            block_on(check(&http, URL)).unwrap(),
            Weights { bytes: None },
            "{status}"
        );
    }
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
    let http = serving(vec![("content-length", "1024")], vec![], false);
    assert!(refused(&http).contains("is 1024 bytes, too small"));
}

#[test]
fn no_answer_is_refused() {
    let http = ScriptedHttp::default();
    http.push(Reply::Fail(HttpError::Network(
        "no answer from http://127.0.0.1:8080".into(),
    )));
    assert!(refused(&http).contains("could not be fetched: network error: no answer"));
}
