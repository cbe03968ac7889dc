"""A scripted LiteLLM provider for Familiar's browser tests.

Without tools it streams `scripted reply to <last user message> (request N)`, N
counting the requests that carried that same message, so a test can tell how many
requests the proxy saw. With tools it streams a short text, then a `get_weather` call
whose arguments arrive in three fragments. A last user message starting with
`overflow-once:` is refused the first time with LiteLLM's own
ContextWindowExceededError, as the proxy answers a provider's length error.
"""
import time
from collections import Counter

from litellm import CustomLLM, ModelResponse
from litellm.exceptions import ContextWindowExceededError
from litellm.types.utils import GenericStreamingChunk

SEEN = Counter()
ARGUMENT_FRAGMENTS = ['{"ci', 'ty": "Pa', 'ris"}']


def _last_user_text(messages):
    for message in reversed(messages):
        if message.get("role") == "user":
            return str(message.get("content"))
    return ""


def _chunk(text="", tool_use=None, finish=None, usage=None):
    return GenericStreamingChunk(text=text, tool_use=tool_use, is_finished=finish is not None,
                                 finish_reason=finish or "", usage=usage, index=0)


def _refuse_the_first(model, text):
    """The provider's length error, the first time an `overflow-once:` message comes."""
    if text.startswith("overflow-once:") and SEEN[text] == 1:
        raise ContextWindowExceededError(
            message="the prompt is too long for this model", model=model,
            llm_provider="familiar")


class Scripted(CustomLLM):
    async def acompletion(self, model, messages, *args, **kwargs):
        text = _last_user_text(messages)
        SEEN[text] += 1
        _refuse_the_first(model, text)
        return ModelResponse(id="chatcmpl-scripted", model=model, created=int(time.time()),
                             choices=[{"index": 0, "finish_reason": "stop", "message": {
                                 "role": "assistant",
                                 "content": f"scripted reply to {text} (request {SEEN[text]})"}}])

    async def astreaming(self, model, messages, api_base, custom_prompt_dict, model_response,
                         print_verbose, encoding, api_key, logging_obj, optional_params, *args, **kwargs):
        text = _last_user_text(messages)
        SEEN[text] += 1
        _refuse_the_first(model, text)
        usage = {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
        if optional_params.get("tools"):
            yield _chunk("Let me check.")
            for i, fragment in enumerate(ARGUMENT_FRAGMENTS):
                call = {"index": 0, "type": "function", "function": {"arguments": fragment}}
                if i == 0:
                    call["id"] = "call_weather"
                    call["function"]["name"] = "get_weather"
                yield _chunk(tool_use=call)
            yield _chunk(finish="tool_calls", usage=usage)
        else:
            for word in ["scripted ", "reply ", "to ", f"{text} ", f"(request {SEEN[text]})"]:
                yield _chunk(word)
            yield _chunk(finish="stop", usage=usage)


handler = Scripted()
