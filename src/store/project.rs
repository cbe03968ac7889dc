//! Whether a Supabase project answers at an address with the world's tables, asked
//! once when a person saves its URL and key in Settings: a URL that 404s, or a key the
//! project refuses, is said at its field rather than "Saved." and an empty world.

use crate::base::http::{Http, HttpRequest};

/// Reads one id of the world's `users` through the project's REST API with `anon_key`;
/// why not, in words a person can act on.
pub async fn check(http: &dyn Http, url: &str, anon_key: &str) -> Result<(), Problem> {
    let base = url.trim().trim_end_matches('/');
    let request = HttpRequest {
        method: "GET",
        url: format!("{base}/rest/v1/users?select=id&limit=1"),
        headers: vec![
            ("apikey".to_owned(), anon_key.trim().to_owned()),
            (
                "Authorization".to_owned(),
                format!("Bearer {}", anon_key.trim()),
            ),
        ],
        body: None,
    };
    let response = http.send(request).await.map_err(|e| {
        Problem::Url(format!(
            "nothing answered at {base} ({e}): check the project URL"
        ))
    })?;
    match response.status {
        200..=299 => Ok(()),
        401 | 403 => Err(Problem::Key(format!(
            "the project at {base} refused this key (HTTP {}): give its anon (publishable) key",
            response.status
        ))),
        404 => Err(Problem::Url(format!(
            "no Supabase project with the world's tables answers at {base} (HTTP 404): check the URL, and that every file of migrations/ is applied"
        ))),
        status => Err(Problem::Url(format!(
            "the project at {base} answered HTTP {status}: it cannot be used now"
        ))),
    }
}

/// Which field a failed check is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The address: nothing, or no project with the world's tables, answers there.
    Url(String),
    /// The key: the project answers but refuses it.
    Key(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::http::{HttpError, HttpResponse};
    use futures::future::LocalBoxFuture;
    use std::cell::RefCell;

    /// Answers every request with `status`, and keeps the requests.
    struct Answers(u16, RefCell<Vec<HttpRequest>>);

    impl Http for Answers {
        fn send(
            &self,
            request: HttpRequest,
        ) -> LocalBoxFuture<'static, Result<HttpResponse, HttpError>> {
            self.1.borrow_mut().push(request);
            let status = self.0;
            Box::pin(async move {
                Ok(HttpResponse {
                    status,
                    headers: Vec::new(),
                    body: Box::pin(futures::stream::empty()),
                })
            })
        }
    }

    fn checked(status: u16) -> (Result<(), Problem>, Vec<HttpRequest>) {
        let http = Answers(status, RefCell::new(Vec::new()));
        let result = futures::executor::block_on(check(&http, "https://x.supabase.co/", "anon"));
        (result, http.1.into_inner())
    }

    #[test]
    fn a_project_that_answers_passes_and_is_asked_with_its_anon_key() {
        let (result, asked) = checked(200);
        assert_eq!(result, Ok(()));
        let request = asked.first().cloned();
        assert_eq!(
            request.as_ref().map(|r| r.url.as_str()),
            Some("https://x.supabase.co/rest/v1/users?select=id&limit=1")
        );
        assert!(request.is_some_and(|r| {
            r.headers
                .contains(&("apikey".to_owned(), "anon".to_owned()))
        }));
    }

    #[test]
    fn a_url_that_404s_is_the_urls_problem_and_a_refused_key_the_keys() {
        assert!(matches!(checked(404).0, Err(Problem::Url(why)) if why.contains("HTTP 404")));
        assert!(matches!(checked(401).0, Err(Problem::Key(why)) if why.contains("anon")));
        assert!(matches!(checked(503).0, Err(Problem::Url(why)) if why.contains("503")));
    }
}
