//! What an OpenAI-compatible server says about its models' context windows: the
//! `GET /models` list (vLLM: `max_model_len`;
//! others: `context_length`, `context_window`) and LiteLLM's `GET /model/info`
//! (`model_info.max_input_tokens`). OpenAI itself says nothing there. Also the
//! models' names, for a list a person picks from.

use serde_json::Value;

/// Where to ask, in order: the models list, then LiteLLM's model info (beside `/v1`).
pub fn info_urls(base_url: &str) -> [String; 2] {
    let base = base_url.trim().trim_end_matches('/');
    let base = base.strip_suffix("/chat/completions").unwrap_or(base);
    let root = base.strip_suffix("/v1").unwrap_or(base);
    [format!("{base}/models"), format!("{root}/model/info")]
}

/// The models an answer to `GET /models` names (`data[].id`, in order); `None` when
/// the answer is not such a list.
pub fn model_ids(answer: &Value) -> Option<Vec<String>> {
    let entries = answer.get("data").and_then(Value::as_array)?;
    Some(
        entries
            .iter()
            .filter_map(|entry| entry.get("id").and_then(Value::as_str))
            .map(str::to_owned)
            .collect(),
    )
}

/// The context window the server gives `model`, if its answer names one.
pub fn window_in(answer: &Value, model: &str) -> Option<u32> {
    let entries = answer.get("data").and_then(Value::as_array)?;
    let named = |entry: &&Value| {
        ["id", "model_name"]
            .iter()
            .any(|key| entry.get(key).and_then(Value::as_str) == Some(model))
    };
    // llama-cpp-python serves one model under whatever alias it was given.
    let entry = entries
        .iter()
        .find(named)
        .or_else(|| (entries.len() == 1).then(|| entries.first()).flatten())?;
    // Not llama.cpp's `meta.n_ctx_train`: what the model was trained on, not the
    // window the server runs it with.
    const PATHS: [&[&str]; 6] = [
        &["context_length"],
        &["max_model_len"],
        &["context_window"],
        &["meta", "n_ctx"],
        &["model_info", "max_input_tokens"],
        &["model_info", "max_tokens"],
    ];
    PATHS.iter().find_map(|path| {
        let value = path.iter().try_fold(entry, |v, key| v.get(key))?;
        value
            .as_u64()
            .filter(|n| *n >= 256)
            .and_then(|n| u32::try_from(n).ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_urls_sit_beside_the_chat_endpoint() {
        assert_eq!(
            info_urls("http://127.0.0.1:4000/v1/"),
            [
                "http://127.0.0.1:4000/v1/models".to_owned(),
                "http://127.0.0.1:4000/model/info".to_owned()
            ]
        );
    }

    #[test]
    fn a_models_list_gives_its_names_in_order() {
        let ollama = json!({"object": "list", "data": [{"id": "qwen2.5:3b", "object": "model"}, {"id": "phi3"}]});
        assert_eq!(
            model_ids(&ollama),
            Some(vec!["qwen2.5:3b".into(), "phi3".into()])
        );
        assert_eq!(model_ids(&json!({"data": []})), Some(vec![]));
        assert_eq!(model_ids(&json!({"models": []})), None);
    }

    #[test]
    fn each_servers_way_of_saying_its_window_is_read() {
        let llama =
            json!({"data": [{"id": "smollm2", "meta": {"n_ctx": 2048, "n_ctx_train": 8192}}]});
        assert_eq!(window_in(&llama, "smollm2"), Some(2048));
        let vllm = json!({"data": [{"id": "a"}, {"id": "b", "max_model_len": 4096}]});
        assert_eq!(window_in(&vllm, "b"), Some(4096));
        assert_eq!(window_in(&vllm, "a"), None);
        let litellm =
            json!({"data": [{"model_name": "gpt", "model_info": {"max_input_tokens": 128000}}]});
        assert_eq!(window_in(&litellm, "gpt"), Some(128_000));
        let openai = json!({"object": "list", "data": [{"id": "gpt-4o", "object": "model"}]});
        assert_eq!(window_in(&openai, "gpt-4o"), None);
    }
}
