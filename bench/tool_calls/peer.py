"""The peer of issue 44's tool-call measure: the same GGUF file behind llama.cpp with
its own tool handling, that is llama-cpp-python's `create_chat_completion(tools=...,
tool_choice="auto")` under its `chatml-function-calling` chat format (a grammar that
picks `functions.<name>:` or `message:`, then the chosen function's JSON Schema as a
grammar). llama-cpp-python ships no `llama-server`; its own server runs this same
handler. Greedy (temperature 0), one thread, a 4,096-token window, as ours.

    python peer.py TASKS.json MODEL.gguf OUT.json

Writes each task's answer ({tool, arguments, text}) for the Rust runner to score with
the same rule as ours (crates/local/examples/tool_calls.rs).
"""
import json
import sys
import time

from llama_cpp import Llama


def wire_messages(task_set, task):
    """Our request as the OpenAI-style messages llama-cpp-python reads."""
    system = task.get("system")
    if system is None:
        system = task_set["sets"][task["set"]]["system"]
    out = [{"role": "system", "content": system}] if system else []
    for m in task["messages"]:
        if m.get("tool_calls"):
            out.append({
                "role": "assistant",
                "content": m.get("content") or None,
                "tool_calls": [{"id": c["id"], "type": "function",
                                "function": {"name": c["name"], "arguments": c["arguments"]}}
                               for c in m["tool_calls"]],
            })
        elif m["role"] == "tool":
            out.append({"role": "tool", "content": m["content"], "tool_call_id": "call_1"})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def wire_tools(tools):
    return [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                              "parameters": t.get("parameters") or {"type": "object", "properties": {}}}}
            for t in tools]


def main(tasks_path, model_path, out_path):
    task_set = json.load(open(tasks_path))
    llm = Llama(model_path=model_path, n_ctx=4096, n_threads=1, chat_format="chatml-function-calling",
                verbose=False)
    answers = {}
    started = time.time()
    for task in task_set["tasks"]:
        tools = wire_tools(task_set["sets"][task["set"]]["tools"])
        reply = llm.create_chat_completion(messages=wire_messages(task_set, task), tools=tools,
                                           tool_choice="auto", temperature=0.0, max_tokens=128)
        message = reply["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        if calls:
            function = calls[0]["function"]
            answers[task["id"]] = {"tool": function["name"], "arguments": function["arguments"], "text": ""}
        else:
            answers[task["id"]] = {"tool": None, "arguments": "", "text": message.get("content") or ""}
    json.dump(answers, open(out_path, "w"), indent=1)
    print(f"{len(answers)} tasks in {time.time() - started:.1f} s (llama-cpp-python)", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
